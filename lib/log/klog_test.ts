import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { readFileSync } from "node:fs";
import { type LogFormat } from "./klog.ts";
import { createLogger, type Logger } from "./logger.ts";

/**
 * What klog itself wrote for the calls below: testdata/klog_lines.go, run
 * with klog v2.140.0 and component-base v0.36.3 (text lines, then JSON lines).
 */
const KLOG_OUTPUT = readFileSync(new URL("testdata/klog_lines.txt", import.meta.url), "utf8");

/** The same calls as testdata/klog_lines.go makes, through our logger. */
function logLikeTheGoProgram(logger: Logger): void {
  logger.info(
    { claim: "ns/data", size: 1073741824, ok: true, ratio: 1.5, none: null },
    "Provisioning volume",
  );
  logger.notice({
    s: 'a"b\\c',
    multi: "line one\nline two",
    trail: "x\n",
    uni: "héllo ☃ \u00a0\u200b\x01\x7f",
    html: "<a&b>",
  }, 'quote "me"\tand\nbreak');
  logger.debug({
    request: { html: "<&>", name: "pvc-1", secrets: { password: "hunter2" } },
    list: ["a", "b"],
    empty: {},
  }, "objects");
  logger.child({ component: "provision", node: "node-a" }).info({ claim: "ns/x" }, "with context");
  logger.child({ component: "capacity" }).error(
    { err: new Error("boom", { cause: new Error("inner") }), storageClass: "fast" },
    "CSI GetCapacity failed",
  );
  logger.child({ node: "node-a" }).info("only context");
  logger.notice({ emptymsg: "" });
}

function ours(format: LogFormat): string {
  let text = "";
  logLikeTheGoProgram(createLogger({ verbosity: 10, format, sink: { write: (l) => text += l } }));
  return text;
}

/** klog's text header `Lmmdd hh:mm:ss.uuuuuu pid file:line] `. */
const HEADER = /^([IWEF])(\d{4} \d{2}:\d{2}:\d{2}\.\d{6}) +(\d+) ([^ \]]+):(\d+)\] /gm;

/** Text lines without what differs between runs: time, pid, file and line. */
function textBodies(text: string): string {
  return text.replace(HEADER, "$1 ");
}

/** JSON lines without "ts" and "caller" (which the agent, having no Go source, leaves out). */
function jsonBodies(text: string): string {
  return text.replace(/"ts":[0-9.]+,/g, "").replace(/"caller":"[^"]*",/g, "");
}

const [klogText, klogJson] = [
  KLOG_OUTPUT.slice(0, KLOG_OUTPUT.indexOf("\n{") + 1),
  KLOG_OUTPUT.slice(KLOG_OUTPUT.indexOf("\n{") + 1),
];

Deno.test("--logging-format=text writes klog's text lines: quoting, multi-line values, err, logger", () => {
  strictEqual(textBodies(ours("text")), textBodies(klogText));
});

Deno.test("text lines carry klog's header, with ???:1 for the caller (no Go source)", () => {
  const line = ours("text").split("\n")[0] ?? "";
  HEADER.lastIndex = 0;
  const [, letter, time, pid, file, lineNumber] = HEADER.exec(line) ?? [];
  deepStrictEqual([letter, pid, file, lineNumber], ["I", `${process.pid}`, "???", "1"]);
  // JavaScript's clock has milliseconds: the microseconds end in 000.
  match(time ?? "", /^\d{4} \d{2}:\d{2}:\d{2}\.\d{3}000$/);
  match(line, new RegExp(`^I\\d{4} [0-9:.]+ {${8 - `${process.pid}`.length}}${process.pid} `));
});

Deno.test("--logging-format=json writes component-base's JSON lines with zap's key order", () => {
  strictEqual(jsonBodies(ours("json")), jsonBodies(klogJson));
});

Deno.test("JSON lines start with ts, the time in milliseconds since the epoch", () => {
  const before = Date.now();
  const lines = ours("json").trim().split("\n").map((line) => JSON.parse(line));
  for (const line of lines) {
    strictEqual(Object.keys(line)[0], "ts");
    strictEqual(typeof line.ts, "number");
    strictEqual(line.ts >= before && line.ts <= Date.now(), true);
  }
});
