import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { quiet } from "../../../tests/fakes/logger.ts";
import { sighting } from "../../../tests/builders/liveness.ts";
import type { EventRecord } from "../../model/events.ts";
import type { PublishedCapacity } from "../../model/storage_capacity.ts";
import { livenessWatchers } from "../../liveness/watchers.ts";
import { CapacityWithdrawer } from "./withdrawer.ts";

const NOW = 1_000_000;
const signal = new AbortController().signal;

function object(node: string, className: string): PublishedCapacity {
  return {
    publisher: `external-provisioner-${node}`,
    name: `csisc-${node}-${className}`,
    uid: `uid-${node}-${className}`,
    resourceVersion: "1",
    ownerNode: { name: node, uid: `node-${node}` },
    storageClassName: className,
    segment: {},
    capacityBytes: 1n,
  };
}

/** A world of two agents: a alive (this one), b gone long ago. */
function world(
  deleteResults: ("deleted" | "gone")[],
  options: { synced?: boolean; self?: string; others?: string[] } = {},
) {
  const deleted: string[] = [];
  const watched: boolean[] = [];
  const probed: string[][] = [];
  const others = (options.others ?? []).flatMap((node) => [object(node, "fast")]);
  const events: EventRecord[] = [];
  const counted: number[] = [];
  const unattended: [string, number][][] = [];
  const withdrawer = new CapacityWithdrawer({
    agents: {
      watch: (on) => void watched.push(on),
      gone: () => new Set(),
      probe: (publishers) => {
        probed.push([...publishers]);
        return Promise.resolve();
      },
      agents: () => [sighting("a", NOW + 1), sighting("b", 0)],
      hasSynced: () => options.synced ?? true,
    },
    objects: {
      list: () => [object("b", "fast"), object("b", "local"), ...others],
      hasSynced: () => true,
    },
    client: {
      delete: (target) => {
        deleted.push(target.name);
        return Promise.resolve(deleteResults.shift() ?? "deleted");
      },
      budget: { take: () => Promise.resolve(true) },
    },
    events: { record: (event) => void events.push(event) },
    metrics: {
      withdrawn: (objects) => void counted.push(objects),
      unattended: (byNode) => void unattended.push([...byNode]),
    },
    logger: quiet,
    now: () => NOW,
  }, {
    self: options.self ?? "external-provisioner-a",
    namespace: "csi",
    withdrawAfterMs: 1000,
    checkEveryMs: 1000,
  });
  return { withdrawer, deleted, events, counted, unattended, watched, probed };
}

Deno.test("CapacityWithdrawer: deletes the gone node's objects, one Event and the count", async () => {
  const w = world([]);
  await w.withdrawer.check(signal);
  deepStrictEqual(w.deleted, ["csisc-b-fast", "csisc-b-local"]);
  deepStrictEqual(w.counted, [2]);
  deepStrictEqual(w.events.map((event) => [event.reason, event.subject.name]), [
    ["CapacityWithdrawn", "b"],
  ]);
  deepStrictEqual(w.unattended, [[["b", 2]]]);
});

Deno.test("CapacityWithdrawer: objects another agent deleted first are not counted", async () => {
  const w = world(["gone", "deleted"]);
  await w.withdrawer.check(signal);
  deepStrictEqual(w.counted, [1]);
  const none = world(["gone", "gone"]);
  await none.withdrawer.check(signal);
  deepStrictEqual([none.counted, none.events], [[], []]);
});

Deno.test("CapacityWithdrawer: nothing before the caches have synced", async () => {
  const w = world([], { synced: false });
  await w.withdrawer.check(signal);
  deepStrictEqual([w.deleted, w.unattended, w.watched], [[], [], [true]]);
  strictEqual(w.events.length, 0);
});

Deno.test("CapacityWithdrawer: an agent that is not one of the Leases' watchers reads theirs, and does not act", async () => {
  const others = Array.from({ length: 12 }, (_, index) => `n${index}`);
  const publishers = ["b", ...others].map((node) => `external-provisioner-${node}`);
  const outsider = others.find((node) =>
    !livenessWatchers(`external-provisioner-${node}`, publishers, new Set()).includes(
      `external-provisioner-${node}`,
    )
  )!;
  const self = `external-provisioner-${outsider}`;
  const w = world([], { self, others });
  await w.withdrawer.check(signal);
  deepStrictEqual([w.watched, w.deleted, w.unattended], [[false], [], [[]]]);
  deepStrictEqual(w.probed, [livenessWatchers(self, publishers, new Set())]);
});
