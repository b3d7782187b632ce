import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "../../tests/cluster/wait.ts";
import { startTestDriver } from "../../tests/csi_driver/driver.ts";
import { capturing } from "../../tests/fakes/logger.ts";
import { csiTarget, openCsiConnection } from "./connection.ts";
import { connectToDriver } from "./handshake.ts";
import type { CsiError } from "./status.ts";
import { quiet } from "../../tests/fakes/logger.ts";

Deno.test("csiTarget() turns a plain path into unix:// and keeps URLs", () => {
  strictEqual(csiTarget("/run/csi/socket"), "unix:///run/csi/socket");
  strictEqual(csiTarget("unix:///csi/csi.sock"), "unix:///csi/csi.sock");
});

/** The test driver on a socket in a new directory, with one pool "fast". */
async function startDriverInTempDir() {
  const dir = mkdtempSync(join(tmpdir(), "conn-"));
  const driver = await startTestDriver({
    endpoint: join(dir, "csi.sock"),
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "1Gi" }],
  });
  return { dir, driver };
}

Deno.test("CSI calls are logged at debug with secrets stripped and timed for metrics", async () => {
  const { dir, driver } = await startDriverInTempDir();
  const { logger, lines } = capturing(5);
  const observed: { method: string; code: string }[] = [];
  const connection = openCsiConnection(join(dir, "csi.sock"), {
    timeoutMs: 2000,
    logger,
    observer: { observe: ({ method, code }) => observed.push({ method, code }) },
  });
  try {
    const response = await connection.call("CreateVolume", {
      name: "pvc-1",
      capacity_range: { required_bytes: "1048576" },
      volume_capabilities: [{
        mount: { fs_type: "", mount_flags: [] },
        access_mode: { mode: "SINGLE_NODE_WRITER" },
      }],
      parameters: { kind: "fast" },
      secrets: { password: "hunter2" },
    });
    strictEqual(response.volume?.capacity_bytes, "1048576");
    const text = lines.join("");
    ok(!text.includes("hunter2"), "the secret never reaches the log");
    ok(text.includes('"secrets":"***stripped***"'));
    ok(text.includes('"msg":"CSI response"'));
    deepStrictEqual(observed, [{ method: "/csi.v1.Controller/CreateVolume", code: "OK" }]);
    const calls = await driver.control.calls("CreateVolume");
    deepStrictEqual(
      calls.length,
      1,
      "the driver did get the secret (it is only stripped from logs)",
    );
  } finally {
    connection.close();
    await driver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("the one signal a worker pool passes with every call cancels the call in flight when it aborts", async () => {
  const { dir, driver } = await startDriverInTempDir();
  const connection = openCsiConnection(join(dir, "csi.sock"), {
    timeoutMs: 30_000,
    logger: quiet,
  });
  const request = (name: string) => ({
    name,
    capacity_range: { required_bytes: "1048576" },
    volume_capabilities: [{
      mount: { fs_type: "", mount_flags: [] },
      access_mode: { mode: "SINGLE_NODE_WRITER" as const },
    }],
    parameters: { kind: "fast" },
    secrets: {},
  });
  const shutdown = new AbortController();
  try {
    for (const name of ["pvc-1", "pvc-2"]) {
      await connection.call("CreateVolume", request(name), { signal: shutdown.signal });
    }
    await driver.control.setFault({ method: "CreateVolume", hang: true });
    const hung = connection.call("CreateVolume", request("pvc-3"), { signal: shutdown.signal })
      .then(() => "answered", (error: CsiError) => error.codeName);
    await waitFor(async () => (await driver.control.calls("CreateVolume")).length === 3, {
      description: "the third call at the driver",
      timeoutMs: 5000,
      intervalMs: 10,
    });
    shutdown.abort();
    strictEqual(await hung, "Canceled");
    strictEqual(connection.inFlight(), 0);
    await driver.control.clearFaults();
    const afterwards = await connection.call("CreateVolume", request("pvc-4"), {
      signal: shutdown.signal,
    }).then(() => "answered", (error: CsiError) => error.codeName);
    strictEqual(afterwards, "Canceled", "a call under an aborted signal is cancelled at once");
  } finally {
    connection.close();
    await driver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("connectToDriver() waits for a socket that appears later", async () => {
  const dir = mkdtempSync(join(tmpdir(), "conn-"));
  const endpoint = `unix://${join(dir, "csi.sock")}`;
  const connection = openCsiConnection(endpoint, {
    timeoutMs: 2000,
    logger: quiet,
  });
  const connecting = connectToDriver(connection, {
    logger: quiet,
    signal: new AbortController().signal,
  });
  await new Promise((resolve) => setTimeout(resolve, 600));
  const driver = await startTestDriver({
    endpoint,
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "1Gi" }],
  });
  try {
    await connecting;
    strictEqual((await connection.call("Probe", {})).ready?.value, true);
  } finally {
    connection.close();
    await driver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
