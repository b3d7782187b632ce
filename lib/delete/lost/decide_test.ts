import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { AgentSighting } from "../../liveness/view.ts";
import { rendezvous } from "../../model/rendezvous.ts";
import { sighting } from "../../../tests/builders/liveness.ts";
import { chooseLost, lostNodeCount, nodeLossStep } from "./decide.ts";

const NOW = 1_000_000;
const MIN = 60_000;

function agent(node: string, aliveUntilMs: number, nodeGoneSinceMs?: number): AgentSighting {
  return sighting(node, aliveUntilMs, nodeGoneSinceMs === undefined ? {} : { nodeGoneSinceMs });
}

Deno.test("chooseLost: each expired agent is acted for by exactly one live watcher", () => {
  const agents = [
    agent("w1", NOW + MIN),
    agent("w2", NOW + MIN),
    agent("w3", NOW - 1),
    ...["x", "y", "z", "u", "v"].map((node) => agent(node, NOW - MIN)),
  ];
  const watchers = ["w1", "w2", "w3"].map((n) => `external-provisioner-${n}`);
  const mine = (self: string) =>
    chooseLost({ nowMs: NOW, self, watchers, agents }).mine.map((a) => a.node);
  const w1 = mine(watchers[0]!);
  const w2 = mine(watchers[1]!);
  deepStrictEqual([...w1, ...w2].sort(), ["u", "v", "w3", "x", "y", "z"]);
  for (const node of w1) {
    strictEqual(rendezvous(`external-provisioner-${node}`, watchers.slice(0, 2)), watchers[0]);
  }
  deepStrictEqual(mine(watchers[2]!), [], "a watcher whose own Lease expired acts for none");
  deepStrictEqual(mine("external-provisioner-x"), [], "nor does an agent that is no watcher");
  strictEqual(chooseLost({ nowMs: NOW, self: watchers[0]!, watchers, agents }).expired.length, 6);
});

Deno.test("nodeLossStep: the clock starts when the Node is first seen deleted, and only then", () => {
  const base = { nowMs: NOW, releaseAfterMs: 10 * MIN };
  deepStrictEqual(nodeLossStep({ ...base, nodeExists: true, goneSinceMs: undefined }), {
    kind: "none",
  });
  deepStrictEqual(nodeLossStep({ ...base, nodeExists: true, goneSinceMs: NOW - MIN }), {
    kind: "clear",
  });
  deepStrictEqual(nodeLossStep({ ...base, nodeExists: false, goneSinceMs: undefined }), {
    kind: "mark",
    sinceMs: NOW,
  });
  deepStrictEqual(nodeLossStep({ ...base, nodeExists: false, goneSinceMs: NOW - 10 * MIN + 1 }), {
    kind: "wait",
    sinceMs: NOW - 10 * MIN + 1,
  });
  deepStrictEqual(nodeLossStep({ ...base, nodeExists: false, goneSinceMs: NOW - 10 * MIN }), {
    kind: "release",
    sinceMs: NOW - 10 * MIN,
  });
  deepStrictEqual(
    nodeLossStep({ ...base, releaseAfterMs: 0, nodeExists: false, goneSinceMs: 0 }),
    { kind: "wait", sinceMs: 0 },
    "0 turns the release off",
  );
});

Deno.test("lostNodeCount: the expired agents whose Lease says their Node is gone", () => {
  strictEqual(lostNodeCount([agent("a", 0), agent("b", 0, 5), agent("c", 0, 7)]), 2);
});
