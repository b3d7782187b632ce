import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { status } from "@grpc/grpc-js";
import { FaultTable, parseFaultSpec } from "./faults.ts";

Deno.test("a code fault with times fires for exactly that many calls, then disarms", () => {
  const table = new FaultTable();
  table.set({ method: "CreateVolume", code: "RESOURCE_EXHAUSTED", times: 2 });
  const codes = [1, 2, 3].map(() => table.take("CreateVolume").error?.code ?? 0);
  deepStrictEqual(codes, [status.RESOURCE_EXHAUSTED, status.RESOURCE_EXHAUSTED, 0]);
  deepStrictEqual(table.list(), []);
});

Deno.test("times 0 or absent means every call until cleared, and clearing one method keeps the others", () => {
  const table = new FaultTable();
  table.set({ method: "CreateVolume", code: 14, times: 0 });
  table.set({ method: "DeleteVolume", code: "Internal", message: "boom" });
  for (let i = 0; i < 5; i++) {
    strictEqual(table.take("CreateVolume").error?.code, status.UNAVAILABLE);
  }
  table.clear("CreateVolume");
  strictEqual(table.take("CreateVolume").error, null);
  deepStrictEqual(table.take("DeleteVolume").error, {
    code: status.INTERNAL,
    message: "boom",
    after: false,
  });
});

Deno.test("a code fault without a message names the code, and after is carried into the plan", () => {
  const table = new FaultTable();
  table.set({ method: "CreateVolume", code: "DEADLINE_EXCEEDED", after: true });
  deepStrictEqual(table.take("CreateVolume").error, {
    code: status.DEADLINE_EXCEEDED,
    message: "injected fault: DEADLINE_EXCEEDED",
    after: true,
  });
});

Deno.test("latency stays for every call while a counted code fault runs out", () => {
  const table = new FaultTable();
  table.set({ method: "GetCapacity", latencyMs: 30 });
  table.set({ method: "GetCapacity", code: "UNAVAILABLE", times: 1 });
  const first = table.take("GetCapacity");
  const second = table.take("GetCapacity");
  deepStrictEqual([first.latencyMs, first.error?.code], [30, status.UNAVAILABLE]);
  deepStrictEqual([second.latencyMs, second.error], [30, null]);
});

Deno.test("Probe notReady and omitReady are counted like codes", () => {
  const table = new FaultTable();
  table.set({ method: "Probe", notReady: true, times: 1 });
  table.set({ method: "Probe", omitReady: true, times: 2 });
  deepStrictEqual([1, 2, 3, 4].map(() => table.take("Probe").ready), [
    "false",
    "absent",
    "absent",
    null,
  ]);
});

Deno.test("a hung call waits until its method's faults are cleared", async () => {
  const table = new FaultTable();
  table.set({ method: "CreateVolume", hang: true });
  strictEqual(table.take("CreateVolume").hang, true);
  const controller = new AbortController();
  const waiting = table.untilCleared("CreateVolume", controller.signal);
  let settled = false;
  void waiting.then(() => settled = true);
  table.clear("DeleteVolume");
  await Promise.resolve();
  strictEqual(settled, false);
  table.clear();
  strictEqual(await waiting, true);
  strictEqual(table.take("CreateVolume").hang, false);
});

Deno.test("a hung call stops waiting when its signal aborts", async () => {
  const table = new FaultTable();
  const controller = new AbortController();
  const waiting = table.untilCleared("Probe", controller.signal);
  controller.abort();
  strictEqual(await waiting, false);
  strictEqual(await table.untilCleared("Probe", controller.signal), false);
});

Deno.test("parseFaultSpec lists every problem of a bad fault", () => {
  const parsed = parseFaultSpec({
    method: "CreateVolum",
    code: "NOPE",
    times: -1,
    latencyMs: 1.5,
    hang: "yes",
    notReady: true,
    extra: 1,
  });
  strictEqual(parsed.ok, false);
  if (parsed.ok) return;
  deepStrictEqual(parsed.problems.length, 7, parsed.problems.join("\n"));
  for (const word of ["extra", "CreateVolum", "NOPE", "times", "latencyMs", "hang", "Probe only"]) {
    strictEqual(parsed.problems.some((p) => p.includes(word)), true, word);
  }
});

Deno.test("parseFaultSpec rejects OK as a code, after without a code and a fault that does nothing", () => {
  const problemsOf = (input: unknown) => {
    const parsed = parseFaultSpec(input);
    return parsed.ok ? [] : parsed.problems;
  };
  strictEqual(problemsOf({ method: "Probe", code: 0 }).length, 1);
  deepStrictEqual(problemsOf({ method: "Probe", after: true, latencyMs: 1 }), [
    "after needs a code to fail with",
  ]);
  strictEqual(problemsOf({ method: "Probe" })[0]?.startsWith("a fault sets at least one"), true);
  strictEqual(problemsOf([]).length, 1);
  deepStrictEqual(problemsOf({ method: "Probe", code: "ResourceExhausted", times: 3 }), []);
});
