import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { prepareSocketPath, removeSocketFile, socketPathOf } from "./endpoint.ts";
import { withTempDir } from "./test_support.ts";

Deno.test("unix:// endpoints, unix: endpoints and bare paths resolve to absolute socket paths", () => {
  deepStrictEqual(socketPathOf("unix:///run/csi/csi.sock"), {
    ok: true,
    path: "/run/csi/csi.sock",
  });
  deepStrictEqual(socketPathOf("/run/csi/csi.sock"), { ok: true, path: "/run/csi/csi.sock" });
  deepStrictEqual(socketPathOf("unix:rel/csi.sock"), {
    ok: true,
    path: path.resolve("rel/csi.sock"),
  });
});

Deno.test("non-unix, empty and over-long endpoints are refused with the reason", () => {
  const problem = (endpoint: string) => {
    const resolved = socketPathOf(endpoint);
    return resolved.ok ? "" : resolved.problem;
  };
  strictEqual(problem("tcp://127.0.0.1:10000").includes("not a unix socket"), true);
  strictEqual(problem("unix://").includes("names no socket file"), true);
  strictEqual(problem(`/tmp/${"x".repeat(120)}.sock`).includes("longer than 107 bytes"), true);
});

Deno.test("preparing a socket path creates its directory and removes a leftover socket", async () => {
  await withTempDir(async (dir) => {
    const socketPath = path.join(dir, "a", "b", "csi.sock");
    prepareSocketPath(socketPath);
    strictEqual(fs.statSync(path.dirname(socketPath)).isDirectory(), true);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      strictEqual(fs.lstatSync(socketPath).isSocket(), true);
      prepareSocketPath(socketPath);
      strictEqual(fs.existsSync(socketPath), false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

Deno.test("preparing or removing a socket path never deletes a regular file", async () => {
  await withTempDir((dir) => {
    const file = path.join(dir, "csi.sock");
    fs.writeFileSync(file, "keep me");
    throws(() => prepareSocketPath(file), /is not a socket/);
    removeSocketFile(file);
    strictEqual(fs.readFileSync(file, "utf8"), "keep me");
    return Promise.resolve();
  });
});
