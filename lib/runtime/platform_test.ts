import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  footprintShrink,
  fullCollection,
  heapUsedBytes,
  serveHttp,
  splitHostPort,
  tryLockFile,
} from "./platform.ts";

Deno.test("splitHostPort() understands host:port, :port and [v6]:port", () => {
  deepStrictEqual(splitHostPort("127.0.0.1:8080"), { hostname: "127.0.0.1", port: 8080 });
  deepStrictEqual(splitHostPort(":9808"), { hostname: "0.0.0.0", port: 9808 });
  deepStrictEqual(splitHostPort("[::1]:80"), { hostname: "::1", port: 80 });
});

Deno.test("serveHttp() serves a fetch handler on a real port and closes cleanly", async () => {
  const listener = serveHttp("127.0.0.1:0", () => new Response("hello"));
  try {
    const response = await fetch(`http://127.0.0.1:${listener.port}/`);
    strictEqual(await response.text(), "hello");
  } finally {
    await listener.close();
  }
});

Deno.test("fullCollection() is Bun.gc(true) under Bun, and none under Deno without --expose-gc", () => {
  strictEqual(fullCollection(), undefined, "deno test runs without --v8-flags=--expose-gc");
  const calls: boolean[] = [];
  const global = globalThis as { Bun?: unknown };
  global.Bun = { gc: (force: boolean) => calls.push(force) };
  try {
    const collect = fullCollection();
    collect?.();
    deepStrictEqual(calls, [true], "a forced, synchronous full collection");
  } finally {
    delete global.Bun;
  }
});

Deno.test("footprintShrink() is Bun.shrink() under Bun, and none under Deno", () => {
  strictEqual(footprintShrink(), undefined);
  let shrinks = 0;
  const global = globalThis as { Bun?: unknown };
  global.Bun = { shrink: () => shrinks++ };
  try {
    footprintShrink()?.();
    strictEqual(shrinks, 1);
  } finally {
    delete global.Bun;
  }
});

Deno.test("heapUsedBytes() reads the heap, and sees it grow while objects are held", () => {
  const before = heapUsedBytes();
  const held = Array.from({ length: 200_000 }, (_, index) => ({ index }));
  const after = heapUsedBytes();
  strictEqual(before > 0, true);
  strictEqual(after > before, true, `${after} > ${before} while ${held.length} objects are held`);
});

Deno.test("tryLockFile() holds one exclusive flock per file; another open file waits until release", async () => {
  const path = join(await mkdtemp(join(tmpdir(), "lock-test-")), "journal.lock");
  await rejects(tryLockFile(path), /cannot open/);
  await writeFile(path, "");
  const first = await tryLockFile(path);
  ok(first !== undefined);
  strictEqual(await tryLockFile(path), undefined, "held by the first");
  first.release();
  const second = await tryLockFile(path);
  ok(second !== undefined, "free once released");
  second.release();
});

Deno.test("tryLockFile(): a lock another process holds is refused, and freed when that process is killed", async () => {
  const path = join(await mkdtemp(join(tmpdir(), "lock-test-")), "journal.lock");
  await writeFile(path, "");
  const holder = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `const lock = await (await import(${JSON.stringify(import.meta.resolve("./platform.ts"))}))` +
      `.tryLockFile(${JSON.stringify(path)}); console.log(lock ? "held" : "busy"); ` +
      "await new Promise(() => setInterval(() => {}, 1000));",
    ],
    stdout: "piped",
  }).spawn();
  const reader = holder.stdout.getReader();
  strictEqual(new TextDecoder().decode((await reader.read()).value).trim(), "held");
  strictEqual(await tryLockFile(path), undefined, "held by the other process");
  holder.kill("SIGKILL");
  await holder.status;
  reader.releaseLock();
  await holder.stdout.cancel();
  const mine = await tryLockFile(path);
  ok(mine !== undefined, "released when its holder died");
  mine.release();
});
