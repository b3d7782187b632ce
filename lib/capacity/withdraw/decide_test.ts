import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { AgentSighting } from "../../liveness/view.ts";
import { rendezvous } from "../../model/rendezvous.ts";
import type { PublishedCapacity } from "../../model/storage_capacity.ts";
import { livenessWatchers } from "../../liveness/watchers.ts";
import { CAPACITY_WITHDRAWN, decideWithdrawals, withdrawalEvent } from "./decide.ts";

const MIN = 60_000;
const NOW = 100 * MIN;
const AFTER = 5 * MIN;

const publisher = (node: string) => `external-provisioner-${node}`;

function agent(node: string, aliveUntilMs: number): AgentSighting {
  return {
    publisher: publisher(node),
    node,
    lease: `lease-${node}`,
    renewedAtMs: aliveUntilMs - MIN,
    aliveUntilMs,
  };
}

function object(node: string, className = "local", owned = true): PublishedCapacity {
  return {
    publisher: publisher(node),
    name: `csisc-${node}-${className}`,
    uid: `uid-${node}-${className}`,
    resourceVersion: "1",
    ...(owned ? { ownerNode: { name: node, uid: `node-uid-${node}` } } : {}),
    storageClassName: className,
    segment: { "topology.hostpath.csi/node": node },
    capacityBytes: 1n,
  };
}

/** The agent among a, b, c (live, besides `gone`) that rendezvous picks for `gone`. */
function chosenFor(gone: string, live: string[]): string {
  return rendezvous(publisher(gone), live.map(publisher))!.replace("external-provisioner-", "");
}

const live = (...nodes: string[]) => nodes.map((node) => agent(node, NOW + MIN));
const NODES = ["a", "b", "c"];

Deno.test("decideWithdrawals: who withdraws a gone agent's capacity, and when", async (t) => {
  const chooser = chosenFor("d", NODES);
  const other = NODES.find((node) => node !== chooser)!;
  const cases: {
    name: string;
    self: string;
    agents: AgentSighting[];
    objects: PublishedCapacity[];
    withdrawAfterMs?: number;
    watchers?: string[];
    unleasedSince?: Map<string, number>;
    unattended: string[];
    withdraw: string[];
  }[] = [
    {
      name: "every agent alive: nothing",
      self: chooser,
      agents: live("a", "b", "c", "d"),
      objects: [object("d")],
      unattended: [],
      withdraw: [],
    },
    {
      name: "expired for longer than the grace: the chosen agent withdraws",
      self: chooser,
      agents: [...live(...NODES), agent("d", NOW - AFTER)],
      objects: [object("d"), object("d", "fast")],
      unattended: ["d"],
      withdraw: ["d"],
    },
    {
      name: "expired for longer than the grace: another live agent does not",
      self: other,
      agents: [...live(...NODES), agent("d", NOW - AFTER)],
      objects: [object("d")],
      unattended: ["d"],
      withdraw: [],
    },
    {
      name: "expired, but not for the grace yet: reported, not withdrawn",
      self: chooser,
      agents: [...live(...NODES), agent("d", NOW - AFTER + 1)],
      objects: [object("d")],
      unattended: ["d"],
      withdraw: [],
    },
    {
      name: "0 disables the withdrawal, not the report",
      self: chooser,
      agents: [...live(...NODES), agent("d", NOW - AFTER)],
      objects: [object("d")],
      withdrawAfterMs: 0,
      unattended: ["d"],
      withdraw: [],
    },
    {
      name: "an agent whose own Lease expired does not act",
      self: "a",
      agents: [agent("a", NOW), agent("d", NOW - AFTER)],
      objects: [object("d")],
      unattended: ["d"],
      withdraw: [],
    },
    {
      name: "never its own node, nor upstream's central objects",
      self: "a",
      agents: [agent("a", NOW + MIN)],
      objects: [object("a"), { ...object("x"), publisher: "external-provisioner" }],
      unattended: [],
      withdraw: [],
    },
    {
      name: "a gone agent without objects: nothing to withdraw",
      self: chooser,
      agents: [...live(...NODES), agent("d", NOW - AFTER)],
      objects: [],
      unattended: [],
      withdraw: [],
    },
    {
      name: "a live agent that is not a watcher does not act",
      self: chooser,
      agents: [...live(...NODES), agent("d", NOW - AFTER)],
      objects: [object("d")],
      watchers: NODES.filter((node) => node !== chooser),
      unattended: ["d"],
      withdraw: [],
    },
    {
      name: "objects without a Lease, first seen now: reported, not withdrawn",
      self: chooser,
      agents: live(...NODES),
      objects: [object("d")],
      unattended: ["d"],
      withdraw: [],
    },
    {
      name: "objects without a Lease for the grace: withdrawn",
      self: chooser,
      agents: live(...NODES),
      objects: [object("d")],
      unleasedSince: new Map([[publisher("d"), NOW - AFTER]]),
      unattended: ["d"],
      withdraw: ["d"],
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const decision = decideWithdrawals({
        nowMs: NOW,
        self: publisher(c.self),
        withdrawAfterMs: c.withdrawAfterMs ?? AFTER,
        watchers: (c.watchers ?? c.agents.map((sighting) => sighting.node)).map(publisher),
        agents: c.agents,
        objects: c.objects,
        unleasedSince: c.unleasedSince ?? new Map(),
      });
      deepStrictEqual(decision.unattended.map((gone) => gone.node), c.unattended);
      deepStrictEqual(decision.withdraw.map((gone) => gone.node), c.withdraw);
    });
  }
});

Deno.test("decideWithdrawals: exactly one of the live agents withdraws each gone node", () => {
  const nodes = Array.from({ length: 8 }, (_, index) => `n${index}`);
  const gone = ["n6", "n7"];
  const agents = nodes.map((node) => agent(node, gone.includes(node) ? NOW - AFTER : NOW + MIN));
  const objects = gone.map((node) => object(node));
  const acting = new Map<string, string[]>();
  const publishers = nodes.map(publisher);
  const goneSet = new Set(gone.map(publisher));
  for (const self of nodes) {
    const decision = decideWithdrawals({
      nowMs: NOW,
      self: publisher(self),
      withdrawAfterMs: AFTER,
      watchers: livenessWatchers(publisher(self), publishers, goneSet),
      agents,
      objects,
      unleasedSince: new Map(),
    });
    for (const node of decision.withdraw.map((entry) => entry.node)) {
      acting.set(node, [...(acting.get(node) ?? []), self]);
    }
  }
  for (const node of gone) {
    strictEqual(acting.get(node)?.length, 1, `${node}: ${acting.get(node)}`);
    ok(!gone.includes(acting.get(node)![0]!), "a gone agent never acts");
  }
});

Deno.test("decideWithdrawals: keeps when objects without a Lease were first seen, and forgets it", () => {
  const input = {
    nowMs: NOW,
    self: publisher("a"),
    withdrawAfterMs: AFTER,
    watchers: [publisher("a")],
    agents: live("a"),
    unleasedSince: new Map([[publisher("d"), NOW - MIN]]),
  };
  const still = decideWithdrawals({ ...input, objects: [object("d"), object("e")] });
  deepStrictEqual(
    [...still.unleasedSince],
    [[publisher("d"), NOW - MIN], [publisher("e"), NOW]],
  );
  strictEqual(still.unattended[0]?.goneSinceMs, NOW - MIN);
  const withdrawn = decideWithdrawals({ ...input, objects: [] });
  strictEqual(withdrawn.unleasedSince.size, 0, "no objects: counted afresh when they come back");
  const leased = decideWithdrawals({ ...input, agents: live("a", "d"), objects: [object("d")] });
  strictEqual(leased.unleasedSince.size, 0);
});

Deno.test("withdrawalEvent: on the owner Node, else on the object; says who, since when, what", () => {
  const gone = {
    publisher: publisher("d"),
    node: "d",
    goneSinceMs: Date.UTC(2026, 0, 1),
    lease: "lease-d",
    objects: [object("d", "local"), object("d", "fast")],
  };
  const event = withdrawalEvent(gone, { namespace: "csi", withdrawn: 2 });
  deepStrictEqual(event.subject, { kind: "Node", name: "d", uid: "node-uid-d" });
  strictEqual(event.type, "Warning");
  strictEqual(event.reason, CAPACITY_WITHDRAWN);
  strictEqual(
    event.message,
    "The CSI provisioner agent of node d has not renewed its Lease csi/lease-d and counts as gone since 2026-01-01T00:00:00.000Z: deleted its 2 CSIStorageCapacity object(s) (StorageClasses fast, local) so that the scheduler stops placing volumes there. The agent publishes them again when it is back.",
  );
  const { lease: _lease, ...unleased } = gone;
  const unowned = withdrawalEvent(
    { ...unleased, objects: [object("d", "local", false)] },
    { namespace: "csi", withdrawn: 1 },
  );
  deepStrictEqual(unowned.subject, {
    kind: "CSIStorageCapacity",
    apiVersion: "storage.k8s.io/v1",
    namespace: "csi",
    name: "csisc-d-local",
    uid: "uid-d-local",
  });
  ok(unowned.message.includes("of node d has no Lease"), unowned.message);
});

Deno.test("livenessWatchers: three, the same whatever the order, the next ones when some are gone", () => {
  const nodes = Array.from({ length: 30 }, (_, index) => publisher(`n${index}`));
  const watchersOf = (self: string, gone = new Set<string>()) =>
    livenessWatchers(self, nodes, gone);
  const top = watchersOf(nodes[0]!).includes(nodes[0]!)
    ? watchersOf(nodes[1]!)
    : watchersOf(nodes[0]!);
  strictEqual(top.length, 3);
  deepStrictEqual(nodes.filter((self) => watchersOf(self).includes(self)).sort(), [...top].sort());
  deepStrictEqual(
    livenessWatchers(nodes[5]!, [...nodes].reverse(), new Set()).sort(),
    watchersOf(nodes[5]!).sort(),
  );
  const gone = new Set(top);
  const next = nodes.filter((self) => !gone.has(self) && watchersOf(self, gone).includes(self));
  strictEqual(next.length, 3, "the next three take over");
  ok(next.every((self) => !top.includes(self)));
  deepStrictEqual(livenessWatchers(publisher("alone"), [], new Set()), [publisher("alone")]);
  deepStrictEqual(
    livenessWatchers(publisher("x"), [publisher("x"), "external-provisioner"], new Set()),
    [publisher("x")],
    "upstream's central objects are no agent's",
  );
});
