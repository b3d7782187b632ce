/**
 * The start-up handshake over a real unix socket against the project's test
 * CSI driver (tests/csi_driver), under Deno. The compiled binary runs the same
 * code in tests/e2e/agent_binary_test.ts.
 */
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestDriver, type TestDriver } from "../../tests/csi_driver/driver.ts";
import type { DriverOptions } from "../../tests/csi_driver/config.ts";
import { FatalError } from "../runtime/fatal.ts";
import { type CsiConnection, openCsiConnection } from "./connection.ts";
import { handshake } from "./handshake.ts";
import { watchConnectionLoss } from "./watch.ts";
import { quiet } from "../../tests/fakes/logger.ts";

async function withDriver(
  overrides: Partial<DriverOptions>,
  body: (driver: TestDriver, connection: CsiConnection) => Promise<void>,
  options: { timeoutMs?: number } = {},
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "handshake-"));
  const driver = await startTestDriver({
    endpoint: `unix://${join(dir, "csi.sock")}`,
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "10Gi" }],
    ...overrides,
  });
  const connection = openCsiConnection(driver.endpoint, {
    timeoutMs: options.timeoutMs ?? 2000,
    logger: quiet,
  });
  try {
    await body(driver, connection);
  } finally {
    connection.close();
    await driver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const run = (connection: CsiConnection) =>
  handshake(connection, {
    logger: quiet,
    signal: new AbortController().signal,
    probeIntervalMs: 20,
  });

Deno.test("handshake() learns name, capabilities and the node's topology segment", async () => {
  await withDriver(
    { controllerCapabilities: ["CREATE_DELETE_VOLUME", "GET_CAPACITY"] },
    async (_driver, connection) => {
      const info = await run(connection);
      strictEqual(info.name, "test.csi.k8s.io");
      strictEqual(info.nodeId, "node-a");
      deepStrictEqual(info.segment, { "topology.test.csi.k8s.io/node": "node-a" });
      deepStrictEqual([...info.controllerCapabilities].sort(), [
        "CREATE_DELETE_VOLUME",
        "GET_CAPACITY",
      ]);
      ok(info.pluginCapabilities.has("CONTROLLER_SERVICE"));
    },
  );
});

Deno.test("handshake() calls Probe, GetPluginInfo, both capability calls and NodeGetInfo in order", async () => {
  await withDriver({}, async (driver, connection) => {
    await run(connection);
    const methods = (await driver.control.calls()).map((call) => call.method);
    deepStrictEqual(methods, [
      "Probe",
      "GetPluginInfo",
      "GetPluginCapabilities",
      "ControllerGetCapabilities",
      "NodeGetInfo",
    ]);
  });
});

Deno.test("handshake() probes again while the driver says it is not ready", async () => {
  await withDriver({}, async (driver, connection) => {
    await driver.control.setFault({ method: "Probe", notReady: true, times: 3 });
    await run(connection);
    strictEqual((await driver.control.calls("Probe")).length, 4);
  });
});

Deno.test("handshake() retries a Probe that times out and gives up on any other Probe error", async () => {
  await withDriver({}, async (driver, connection) => {
    await driver.control.setFault({ method: "Probe", code: "DEADLINE_EXCEEDED", times: 2 });
    await run(connection);
    strictEqual((await driver.control.calls("Probe")).length, 3);
  });
  await withDriver({}, async (driver, connection) => {
    await driver.control.setFault({
      method: "Probe",
      code: "INTERNAL",
      message: "disk on fire",
      times: 1,
    });
    await rejects(run(connection), (error: Error) => {
      ok(error instanceof FatalError);
      ok(
        error.message.startsWith(
          "CSI driver probe failed: rpc error: code = Internal desc = disk on fire",
        ),
      );
      return true;
    });
  });
});

Deno.test("handshake() refuses a driver without CONTROLLER_SERVICE or CREATE_DELETE_VOLUME", async () => {
  await withDriver(
    {
      pluginCapabilities: ["VOLUME_ACCESSIBILITY_CONSTRAINTS"],
      controllerCapabilities: ["GET_CAPACITY"],
    },
    async (_driver, connection) => {
      await rejects(run(connection), {
        name: "FatalError",
        message:
          "CSI driver test.csi.k8s.io does not support dynamic provisioning: plugin CONTROLLER_SERVICE capability is not reported; " +
          "CSI driver test.csi.k8s.io does not support dynamic provisioning: controller CREATE_DELETE_VOLUME capability is not reported",
      });
    },
  );
});

Deno.test("every handshake call carries the --timeout deadline", async () => {
  await withDriver({}, async (driver, connection) => {
    await driver.control.setFault({ method: "NodeGetInfo", hang: true });
    const started = performance.now();
    await rejects(run(connection), (error: Error) => {
      ok(
        error.message.startsWith(
          "Failed to get node info from CSI driver: rpc error: code = DeadlineExceeded",
        ),
        error.message,
      );
      return true;
    });
    const elapsed = performance.now() - started;
    ok(elapsed >= 250 && elapsed < 2000, `took ${elapsed} ms`);
    await driver.control.clearFaults();
  }, { timeoutMs: 300 });
});

Deno.test("watchConnectionLoss() reports a driver that went away after the handshake", async () => {
  await withDriver({}, async (driver, connection) => {
    await run(connection);
    const watching = watchConnectionLoss(connection, new AbortController().signal);
    await driver.stop();
    strictEqual(await watching, "lost");
  });
});
