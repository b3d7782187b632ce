import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { status } from "@grpc/grpc-js";
import type { CreateVolumeResponse } from "../../lib/csi/types.ts";
import { createRequest, withDriver } from "./test_support.ts";

Deno.test("a code fault fails the next N calls before any work, then the method works again", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({
      method: "CreateVolume",
      code: "UNAVAILABLE",
      message: "try later",
      times: 2,
    });
    for (let i = 0; i < 2; i++) {
      const error = await csi.fail("CreateVolume", createRequest("pvc-1", { kind: "fast" }));
      deepStrictEqual([error.code, error.details], [status.UNAVAILABLE, "try later"]);
    }
    deepStrictEqual(await driver.control.volumes(), [], "a failed CreateVolume created nothing");
    await csi.call("CreateVolume", createRequest("pvc-1", { kind: "fast" }));
    deepStrictEqual((await driver.control.calls("CreateVolume")).map((c) => c.codeName), [
      "UNAVAILABLE",
      "UNAVAILABLE",
      "OK",
    ]);
  });
});

Deno.test("a fault with after does the work and then fails, so the volume exists but the answer is lost", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({
      method: "CreateVolume",
      code: "DEADLINE_EXCEEDED",
      times: 1,
      after: true,
    });
    const error = await csi.fail("CreateVolume", createRequest("pvc-1", { kind: "fast" }));
    strictEqual(error.code, status.DEADLINE_EXCEEDED);
    const [volume] = await driver.control.volumes();
    strictEqual(volume?.name, "pvc-1");
    const retried = await csi.call<CreateVolumeResponse>(
      "CreateVolume",
      createRequest("pvc-1", { kind: "fast" }),
    );
    strictEqual(retried.volume?.volume_id, volume?.id);
  });
});

Deno.test("a fault on one method leaves the others alone, and clearing one method keeps the rest", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({ method: "DeleteVolume", code: "INTERNAL" });
    await driver.control.setFault({ method: "GetCapacity", code: "ABORTED" });
    await csi.call("CreateVolume", createRequest("pvc-1", { kind: "fast" }));
    strictEqual((await csi.fail("DeleteVolume", { volume_id: "x" })).code, status.INTERNAL);
    await driver.control.clearFaults("DeleteVolume");
    await csi.call("DeleteVolume", { volume_id: "x" });
    strictEqual((await csi.fail("GetCapacity", {})).code, status.ABORTED);
    await driver.control.clearFaults();
    await csi.call("GetCapacity", {});
  });
});

Deno.test("latency delays every call until cleared", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({ method: "Probe", latencyMs: 300 });
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      await csi.call("Probe");
      const elapsed = performance.now() - started;
      strictEqual(elapsed >= 295, true, `call ${i} took ${elapsed} ms`);
    }
    await driver.control.clearFaults("Probe");
    const started = performance.now();
    await csi.call("Probe");
    strictEqual(performance.now() - started < 250, true, "cleared latency is gone");
  });
});

Deno.test("a hung call never answers and ends with the client's deadline", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({ method: "CreateVolume", hang: true });
    const started = performance.now();
    const error = await csi.fail("CreateVolume", createRequest("pvc-1", { kind: "fast" }), {
      deadlineMs: 300,
    });
    strictEqual(error.code, status.DEADLINE_EXCEEDED);
    strictEqual(performance.now() - started >= 280, true);
    deepStrictEqual(await driver.control.volumes(), []);
    // The driver records the abandoned call once it notices the deadline itself.
    await waitFor(async () => (await driver.control.calls("CreateVolume"))[0]?.code !== null);
    strictEqual((await driver.control.calls("CreateVolume"))[0]?.codeName, "DEADLINE_EXCEEDED");
  });
});

Deno.test("a hung call cancelled by the client is logged as CANCELLED and creates nothing", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({ method: "CreateVolume", hang: true });
    const cancel = new AbortController();
    const pending = csi.fail("CreateVolume", createRequest("pvc-1", { kind: "fast" }), {
      signal: cancel.signal,
    });
    await waitFor(async () => (await driver.control.calls("CreateVolume")).length === 1);
    cancel.abort();
    strictEqual((await pending).code, status.CANCELLED);
    await waitFor(async () => (await driver.control.calls("CreateVolume"))[0]?.code !== null);
    strictEqual((await driver.control.calls("CreateVolume"))[0]?.codeName, "CANCELLED");
    await driver.control.clearFaults();
    deepStrictEqual(
      await driver.control.volumes(),
      [],
      "the released call did not go on to create",
    );
  });
});

Deno.test("a hung call shows in the call log while pending and runs normally once faults are cleared", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({ method: "CreateVolume", hang: true, code: "INTERNAL" });
    const pending = csi.call<CreateVolumeResponse>(
      "CreateVolume",
      createRequest("pvc-1", { kind: "fast" }),
    );
    await waitFor(async () => (await driver.control.calls("CreateVolume")).length === 1);
    strictEqual((await driver.control.calls("CreateVolume"))[0]?.code, null);
    await driver.control.clearFaults("CreateVolume");
    const response = await pending;
    strictEqual(response.volume?.capacity_bytes, String(1024 * 1024));
    strictEqual((await driver.control.calls("CreateVolume"))[0]?.codeName, "OK");
  });
});

Deno.test("stopping the driver ends hung calls instead of waiting for them", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({ method: "Probe", hang: true });
    const pending = csi.fail("Probe", {}, { deadlineMs: 30_000 });
    await waitFor(async () => (await driver.control.calls("Probe")).length === 1);
    const started = performance.now();
    await driver.stop();
    strictEqual((await pending).code, status.UNAVAILABLE);
    strictEqual(performance.now() - started < 900, true, "stop did not wait out the grace period");
    strictEqual((await driver.control.calls("Probe"))[0]?.message, "the test driver is stopping");
  });
});

Deno.test("Probe answers ready=false for notReady and no ready field for omitReady, then ready again", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({ method: "Probe", notReady: true, times: 2 });
    deepStrictEqual(await csi.call("Probe"), { ready: { value: false } });
    deepStrictEqual(await csi.call("Probe"), { ready: { value: false } });
    deepStrictEqual(await csi.call("Probe"), { ready: { value: true } });
    await driver.control.setFault({ method: "Probe", omitReady: true, times: 1 });
    deepStrictEqual(await csi.call("Probe"), { ready: null });
    deepStrictEqual(await csi.call("Probe"), { ready: { value: true } });
  });
});

Deno.test("an invalid fault is refused and arms nothing", async () => {
  await withDriver({}, async ({ driver }) => {
    let message = "";
    await driver.control.setFault({ method: "CreateVolume", code: "NOT_A_CODE" }).catch((
      e: Error,
    ) => message = e.message);
    strictEqual(message.includes("code must be a gRPC error code"), true, message);
    deepStrictEqual(await driver.control.faults(), []);
  });
});

/** Polls a condition every 10 ms for at most 5 s. */
async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met within 5 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
