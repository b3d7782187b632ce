import assert from "node:assert/strict";
import { RequestHeadParser } from "./request_heads.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("RequestHeadParser finds each request head and skips bodies by Content-Length", () => {
  const parser = new RequestHeadParser();
  const body = JSON.stringify({ metadata: { name: "a\r\n\r\nGET /fake HTTP/1.1" } });
  const stream = `GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: x\r\n\r\n` +
    `POST /api/v1/namespaces/a/events HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
    `DELETE /api/v1/persistentvolumes/pv HTTP/1.1\r\nHost: x\r\n\r\n`;
  // Fed a few bytes at a time: heads and bodies cross chunk boundaries.
  const found = [];
  for (let at = 0; at < stream.length; at += 7) {
    found.push(...parser.feed(bytes(stream.slice(at, at + 7))));
  }
  assert.deepEqual(found, [
    { method: "GET", path: "/api/v1/pods?watch=true" },
    { method: "POST", path: "/api/v1/namespaces/a/events" },
    { method: "DELETE", path: "/api/v1/persistentvolumes/pv" },
  ]);
  assert.equal(parser.parsing, true);
});

Deno.test("RequestHeadParser stops at a chunked request body", () => {
  const parser = new RequestHeadParser();
  const found = parser.feed(
    bytes("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
  );
  assert.deepEqual(found, [{ method: "POST", path: "/x" }]);
  assert.equal(parser.parsing, false);
  assert.deepEqual(parser.feed(bytes("GET /y HTTP/1.1\r\n\r\n")), []);
});
