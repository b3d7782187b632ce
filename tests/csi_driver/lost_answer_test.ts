/**
 * The lost-answer fault (how upstream external-provisioner's volume leak happens): the driver
 * does the work, also for a caller that gave up or died meanwhile, and then
 * the answer hangs, fails or is cut off with the connection. The volume
 * stays; asking again with the same name returns it.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { status } from "@grpc/grpc-js";
import type { CreateVolumeResponse } from "../../lib/csi/types.ts";
import { FaultTable, parseFaultSpec } from "./faults.ts";
import { connectCsi } from "./test_client.ts";
import { createRequest, withDriver } from "./test_support.ts";

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met within 5 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

Deno.test("lostAnswer fail: the volume is made, the caller gets UNAVAILABLE, asking again returns it", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({ method: "CreateVolume", lostAnswer: "fail", times: 1 });
    const error = await csi.fail("CreateVolume", createRequest("pvc-1", { kind: "fast" }));
    strictEqual(error.code, status.UNAVAILABLE);
    const [volume] = await driver.control.volumes();
    strictEqual(volume?.name, "pvc-1");
    const again = await csi.call<CreateVolumeResponse>(
      "CreateVolume",
      createRequest("pvc-1", { kind: "fast" }),
    );
    strictEqual(again.volume?.volume_id, volume?.id);
    deepStrictEqual((await driver.control.calls("CreateVolume")).map((c) => c.codeName), [
      "UNAVAILABLE",
      "OK",
    ]);
  });
});

Deno.test("lostAnswer hang with latency: the caller gives up during the work, the work is done anyway", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await driver.control.setFault({
      method: "CreateVolume",
      lostAnswer: "hang",
      latencyMs: 300,
      times: 1,
    });
    const cancel = new AbortController();
    const pending = csi.fail("CreateVolume", createRequest("pvc-1", { kind: "fast" }), {
      signal: cancel.signal,
    });
    await waitFor(async () => (await driver.control.calls("CreateVolume")).length === 1);
    cancel.abort();
    strictEqual((await pending).code, status.CANCELLED);
    deepStrictEqual(await driver.control.volumes(), [], "still working");
    await waitFor(async () => (await driver.control.volumes()).length === 1);
    await waitFor(async () => (await driver.control.calls("CreateVolume"))[0]?.code !== null);
    strictEqual((await driver.control.calls("CreateVolume"))[0]?.codeName, "CANCELLED");
  });
});

Deno.test("lostAnswer hang answers once the faults are cleared; DeleteVolume loses its answer too", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    const made = await csi.call<CreateVolumeResponse>(
      "CreateVolume",
      createRequest("pvc-1", { kind: "fast" }),
    );
    await driver.control.setFault({ method: "DeleteVolume", lostAnswer: "hang" });
    const pending = csi.call("DeleteVolume", { volume_id: made.volume!.volume_id });
    await waitFor(async () => (await driver.control.volumes()).length === 0);
    await driver.control.clearFaults("DeleteVolume");
    deepStrictEqual(await pending, {});
  });
});

Deno.test("lostAnswer cut: the work is done and every connection is cut; the socket still serves", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    const other = connectCsi(driver.endpoint);
    try {
      await other.call("Probe");
      await driver.control.setFault({ method: "CreateVolume", lostAnswer: "cut", times: 1 });
      const error = await csi.fail("CreateVolume", createRequest("pvc-1", { kind: "fast" }));
      ok(
        [status.UNAVAILABLE, status.CANCELLED, status.INTERNAL].includes(error.code),
        error.message,
      );
      strictEqual((await driver.control.volumes()).length, 1);
      await csi.call("CreateVolume", createRequest("pvc-1", { kind: "fast" }));
      await other.call("Probe");
      strictEqual((await driver.control.volumes()).length, 1);
    } finally {
      other.close();
    }
  });
});

Deno.test("fault specs: lostAnswer, a latency range and a probability are checked", () => {
  const problems = (input: unknown) => {
    const parsed = parseFaultSpec(input);
    return parsed.ok ? [] : parsed.problems;
  };
  deepStrictEqual(problems({ method: "CreateVolume", lostAnswer: "hang", times: 3 }), []);
  deepStrictEqual(problems({ method: "CreateVolume", lostAnswer: "fail", code: "INTERNAL" }), []);
  deepStrictEqual(problems({ method: "CreateVolume", latencyMs: 1000, latencyMaxMs: 2000 }), []);
  deepStrictEqual(problems({ method: "CreateVolume", lostAnswer: "drop" }), [
    'lostAnswer must be one of hang, fail, cut; got "drop"',
  ]);
  deepStrictEqual(problems({ method: "CreateVolume", lostAnswer: "hang", code: 13 }), [
    "a code goes with lostAnswer fail only",
  ]);
  deepStrictEqual(
    problems({ method: "CreateVolume", lostAnswer: "hang", after: true }),
    [
      "lostAnswer does the work itself: leave out after and hang",
      "after needs a code to fail with",
    ].reverse(),
  );
  deepStrictEqual(problems({ method: "CreateVolume", latencyMs: 5, latencyMaxMs: 1 }), [
    "latencyMaxMs needs latencyMs, and at least as much",
  ]);
  deepStrictEqual(problems({ method: "CreateVolume", lostAnswer: "fail", probability: 0 }), [
    "probability must be in (0, 1]; got 0",
  ]);
});

Deno.test("a latency range draws each call's latency; a probability decides which calls a fault hits", () => {
  const draws = [0, 0.1, 0.5, 0.5, 0.5, 0.9];
  const table = new FaultTable({ random: () => draws.shift() ?? 0 });
  table.set({ method: "CreateVolume", latencyMs: 1000, latencyMaxMs: 2000 });
  table.set({ method: "CreateVolume", lostAnswer: "fail", probability: 0.3, times: 5 });
  const first = table.take("CreateVolume");
  const second = table.take("CreateVolume");
  const third = table.take("CreateVolume");
  deepStrictEqual([first.latencyMs, first.lost?.mode], [1000, "fail"]);
  deepStrictEqual([second.latencyMs, second.lost], [1500, null]);
  deepStrictEqual([third.latencyMs, third.lost], [1500, null]);
  strictEqual(table.list()[0]?.lost?.remaining, 4, "a call the fault skipped is not counted");
});
