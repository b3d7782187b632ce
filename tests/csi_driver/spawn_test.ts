import { deepStrictEqual, strictEqual } from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import type { CreateVolumeResponse } from "../../lib/csi/types.ts";
import { requireSocketPath } from "./endpoint.ts";
import { driverArgs, spawnTestDriver } from "./spawn.ts";
import { connectCsi } from "./test_client.ts";
import { createRequest, withTempDir } from "./test_support.ts";

Deno.test("driverArgs turns options into the flags main.ts reads", () => {
  deepStrictEqual(
    driverArgs({
      endpoint: "/d/csi.sock",
      controlEndpoint: "/d/control.sock",
      nodeId: "node-a",
      pools: [{ kind: "fast", size: "10Gi", maxVolumeSize: "1Gi" }, { kind: "slow", size: 1024 }],
      stateDir: "/d/state",
      controllerCapabilities: ["CREATE_DELETE_VOLUME", "GET_CAPACITY", "MODIFY_VOLUME"],
      logLevel: "warn",
    }),
    [
      "--endpoint",
      "/d/csi.sock",
      "--node-id",
      "node-a",
      "--control-endpoint",
      "/d/control.sock",
      "--capacity",
      "fast=10Gi",
      "--max-volume-size",
      "fast=1Gi",
      "--capacity",
      "slow=1024",
      "--state-dir=/d/state",
      "--controller-capabilities=CREATE_DELETE_VOLUME,GET_CAPACITY,MODIFY_VOLUME",
      "--log-level=warn",
    ],
  );
});

Deno.test("a spawned driver serves CSI and control, logs one line per RPC, and stop leaves nothing behind", async () => {
  const driver = await spawnTestDriver({
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "1Gi" }],
  });
  const csi = connectCsi(driver.endpoint);
  const socketPath = requireSocketPath(driver.endpoint);
  try {
    deepStrictEqual(await csi.call("Probe"), { ready: { value: true } });
    await csi.call("CreateVolume", {
      ...createRequest("pvc-1", { kind: "fast" }),
      secrets: { password: "hunter2" },
    });
    deepStrictEqual((await driver.control.volumes()).map((v) => v.name), ["pvc-1"]);
    deepStrictEqual((await driver.control.calls()).map((c) => c.method), ["Probe", "CreateVolume"]);
  } finally {
    csi.close();
    await driver.stop();
  }
  deepStrictEqual(await driver.exited, { code: 0, signal: null });
  strictEqual(fs.existsSync(socketPath), false);
  strictEqual(fs.existsSync(path.dirname(socketPath)), false, "the temporary directory is gone");
  const lines = driver.stderr().trim().split("\n").map((line) =>
    JSON.parse(line) as Record<string, unknown>
  );
  const rpcs = lines.filter((line) => line["msg"] === "rpc");
  deepStrictEqual(rpcs.map((line) => [line["method"], line["code"], typeof line["durationMs"]]), [
    ["Probe", "OK", "number"],
    ["CreateVolume", "OK", "number"],
  ]);
  strictEqual(driver.stderr().includes("hunter2"), false, "secrets never reach the log");
});

Deno.test("a killed driver restarts on its stale socket and still knows its volumes", async () => {
  await withTempDir(async (dir) => {
    const options = {
      endpoint: `unix://${path.join(dir, "csi.sock")}`,
      controlEndpoint: path.join(dir, "control.sock"),
      nodeId: "node-a",
      pools: [{ kind: "fast", size: "1Gi" }],
      stateDir: path.join(dir, "state"),
      logLevel: "warn" as const,
    };
    const first = await spawnTestDriver(options);
    let created: CreateVolumeResponse;
    const csi = connectCsi(first.endpoint);
    try {
      created = await csi.call<CreateVolumeResponse>(
        "CreateVolume",
        createRequest("pvc-1", { kind: "fast" }),
      );
    } finally {
      csi.close();
      await first.kill();
    }
    strictEqual((await first.exited).signal, "SIGKILL");
    strictEqual(
      fs.lstatSync(path.join(dir, "csi.sock")).isSocket(),
      true,
      "a crash leaves its socket",
    );
    const second = await spawnTestDriver(options);
    try {
      deepStrictEqual((await second.control.volumes()).map((v) => v.id), [
        created.volume?.volume_id,
      ]);
      deepStrictEqual(await second.control.calls(), [], "the readiness check made no CSI call");
    } finally {
      await second.stop();
    }
    deepStrictEqual(fs.readdirSync(dir), ["state"]);
  });
});

Deno.test("spawnTestDriver reports a driver that cannot start, with its stderr", async () => {
  let message = "";
  try {
    const driver = await spawnTestDriver({
      nodeId: "node-a",
      pools: [{ kind: "fast", size: "lots" }],
    });
    await driver.stop();
  } catch (error: unknown) {
    message = error instanceof Error ? error.message : String(error);
  }
  strictEqual(message.includes("exited with code 2"), true, message);
  strictEqual(message.includes('"lots" is not a size'), true, message);
});

Deno.test("stop kills a driver that ignores SIGTERM once the deadline passes, and still cleans up", async () => {
  const driver = await spawnTestDriver({
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "1Gi" }],
  });
  const socketPath = requireSocketPath(driver.endpoint);
  process.kill(driver.pid, "SIGSTOP");
  const started = performance.now();
  await driver.stop({ timeoutMs: 300 });
  strictEqual(performance.now() - started >= 290, true);
  strictEqual((await driver.exited).signal, "SIGKILL");
  strictEqual(fs.existsSync(path.dirname(socketPath)), false);
});

Deno.test("the standalone driver runs under bun as well", async () => {
  const driver = await spawnTestDriver({
    nodeId: "node-b",
    pools: [{ kind: "fast", size: "1Gi" }],
    runtime: "bun",
  });
  const csi = connectCsi(driver.endpoint);
  try {
    deepStrictEqual((await csi.call("NodeGetInfo")).node_id, "node-b");
  } finally {
    csi.close();
    await driver.stop();
  }
  deepStrictEqual(await driver.exited, { code: 0, signal: null });
});
