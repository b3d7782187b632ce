import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ProcessGroup, spawnLogged, tailFile } from "./process.ts";

async function withTempDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "cluster-process-test-" });
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("spawnLogged writes stdout and stderr to the log file", async () => {
  await withTempDir(async (dir) => {
    const logFile = join(dir, "echo.log");
    const process = spawnLogged({
      name: "echo",
      command: "/bin/sh",
      args: ["-c", 'echo "out $GREETING"; echo err >&2'],
      logFile,
      env: { GREETING: "hello" },
    });
    const status = await process.exited;
    assert.equal(status.code, 0);
    assert.equal(process.running, false);
    assert.equal(await Deno.readTextFile(logFile), "out hello\nerr\n");
  });
});

Deno.test("stop sends SIGTERM, then SIGKILL to a process that ignores it", async () => {
  await withTempDir(async (dir) => {
    const polite = spawnLogged({
      name: "sleep",
      command: "sleep",
      args: ["30"],
      logFile: join(dir, "sleep.log"),
    });
    assert.equal((await polite.stop()).signal, "SIGTERM");
    const stubborn = spawnLogged({
      name: "stubborn",
      command: "/bin/sh",
      args: ["-c", "trap '' TERM; echo started; while :; do sleep 0.05; done"],
      logFile: join(dir, "stubborn.log"),
    });
    while (!(await tailFile(join(dir, "stubborn.log"))).includes("started")) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const started = performance.now();
    const status = await stubborn.stop({ graceMs: 300 });
    assert.equal(status.signal, "SIGKILL");
    assert.ok(performance.now() - started >= 290);
    assert.equal((await stubborn.stop()).signal, "SIGKILL", "stop after exit returns the status");
  });
});

Deno.test("kill is SIGKILL and the pid is gone afterwards", async () => {
  await withTempDir(async (dir) => {
    const process = spawnLogged({
      name: "sleep",
      command: "sleep",
      args: ["30"],
      logFile: join(dir, "sleep.log"),
    });
    assert.equal(existsSync(`/proc/${process.pid}`), true);
    assert.equal((await process.kill()).signal, "SIGKILL");
    assert.equal(existsSync(`/proc/${process.pid}`), false);
  });
});

Deno.test("a process group stops in reverse start order and tails every log", async () => {
  await withTempDir(async (dir) => {
    const group = new ProcessGroup();
    const order = join(dir, "order");
    for (const name of ["first", "second"]) {
      group.spawn({
        name,
        command: "/bin/sh",
        args: [
          "-c",
          `echo ${name} up; trap 'echo ${name} >> ${order}; exit 0' TERM; while :; do sleep 0.05; done`,
        ],
        logFile: join(dir, `${name}.log`),
      });
    }
    while (!(await tailFile(join(dir, "second.log"))).includes("up")) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await group.stopAll();
    assert.equal(await Deno.readTextFile(order), "second\nfirst\n");
    const tails = await group.tailLogs(5);
    assert.match(tails, /===== first \(pid \d+, exited 0\)/);
    assert.match(tails, /second up/);
  });
});

Deno.test("tailFile returns the last lines, or nothing for a missing file", async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, "log");
    await Deno.writeTextFile(
      file,
      Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n") + "\n",
    );
    assert.equal(await tailFile(file, 2), "line 98\nline 99");
    assert.equal(await tailFile(join(dir, "missing")), "");
  });
});
