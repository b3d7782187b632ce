import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { AgentLease } from "../model/lease.ts";
import { isAlive, LivenessView } from "./view.ts";

function lease(node: string, renewTime: string, durationMs = 60_000): AgentLease {
  return {
    name: `lease-${node}`,
    resourceVersion: renewTime,
    node,
    publisher: `external-provisioner-${node}`,
    renewTime,
    durationMs,
  };
}

Deno.test("LivenessView: alive for a lease duration after this agent saw the renewTime change", () => {
  let now = 1000;
  const view = new LivenessView(() => now);
  view.observe({ old: undefined, new: lease("a", "t1") });
  deepStrictEqual(view.agents().map((agent) => [agent.node, agent.aliveUntilMs]), [["a", 61_000]]);
  now = 30_000;
  view.observe({ old: lease("a", "t1"), new: { ...lease("a", "t1"), resourceVersion: "x" } });
  strictEqual(
    view.agents()[0]!.aliveUntilMs,
    61_000,
    "another change than renewTime renews nothing",
  );
  view.observe({ old: lease("a", "t1"), new: lease("a", "t2") });
  strictEqual(view.agents()[0]!.aliveUntilMs, 90_000);
  strictEqual(isAlive(view.agents()[0]!, 89_999), true);
  strictEqual(isAlive(view.agents()[0]!, 90_000), false);
});

Deno.test("LivenessView: a deleted Lease is no sighting; a renewTime far in the past is not trusted", () => {
  const view = new LivenessView(() => 5000);
  view.observe({ old: undefined, new: lease("a", "1970-01-01T00:00:00.000000Z") });
  strictEqual(view.agents()[0]!.aliveUntilMs, 65_000, "another node's clock is never compared");
  view.observe({ old: lease("a", "t1"), new: undefined });
  deepStrictEqual(view.agents(), []);
});

Deno.test("LivenessView: a note written on the Lease is kept without counting as a renewal", () => {
  let now = 1000;
  const view = new LivenessView(() => now);
  view.observe({ old: undefined, new: lease("a", "t1") });
  now = 90_000;
  view.observe({ old: lease("a", "t1"), new: { ...lease("a", "t1"), nodeGoneSinceMs: 80_000 } });
  strictEqual(view.agents()[0]!.aliveUntilMs, 61_000);
  strictEqual(view.agents()[0]!.nodeGoneSinceMs, 80_000);
  view.observe({ old: lease("a", "t1"), new: lease("a", "t1") });
  strictEqual(view.agents()[0]!.nodeGoneSinceMs, undefined);
});
