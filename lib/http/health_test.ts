import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { createLiveness, Readiness } from "./health.ts";

Deno.test("createLiveness() probes at most once per second and shares a running probe", async () => {
  let probes = 0;
  let clock = 0;
  const live = createLiveness(() => {
    probes++;
    return Promise.resolve();
  }, { now: () => clock });
  const [a, b] = await Promise.all([live(), live()]);
  deepStrictEqual([a.ok, b.ok, probes], [true, true, 1]);
  clock = 999;
  await live();
  strictEqual(probes, 1, "a report younger than a second is reused");
  clock = 1000;
  await live();
  strictEqual(probes, 2);
});

Deno.test("createLiveness() reports a failing probe with its reason", async () => {
  const live = createLiveness(() => Promise.reject(new Error("connection refused")));
  deepStrictEqual(await live(), { ok: false, lines: ["csi probe: connection refused"] });
});

Deno.test("Readiness is ready only when every required condition is met", () => {
  const readiness = new Readiness();
  strictEqual(readiness.report().ok, false, "nothing registered is not ready");
  readiness.require("csi", "handshake not done");
  readiness.require("informers", "not synced");
  readiness.set("csi", true);
  deepStrictEqual(readiness.report(), { ok: false, lines: ["csi: ok", "informers: not synced"] });
  readiness.set("informers", true);
  strictEqual(readiness.report().ok, true);
});
