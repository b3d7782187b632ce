import { deepStrictEqual } from "node:assert/strict";
import type { Claim, VolumeSnapshot } from "../model/objects.ts";
import { decideCloneFinalizer, pendingSource, planSweep, STAND_IN_DELAY_MS } from "./decide.ts";
import { claim, sourceClaim, volumeSnapshot } from "../../tests/builders/provision.ts";
import {
  CLONE_PROTECTION_FINALIZER as CLONE,
  SNAPSHOT_SOURCE_PROTECTION_FINALIZER as PROTECTION,
} from "../model/keys.ts";

const SNAPSHOT_REF = { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: "snap" };

function pending(spec: Partial<Claim["spec"]>, phase?: string): Claim {
  return { ...claim({ spec }), ...(phase === undefined ? {} : { status: { phase } }) };
}

Deno.test("pendingSource() names what a Pending (or new) claim clones or restores", () => {
  deepStrictEqual(
    pendingSource(pending({ dataSource: { kind: "PersistentVolumeClaim", name: "o" } })),
    {
      kind: "clone",
      namespace: "apps",
      name: "o",
    },
  );
  deepStrictEqual(pendingSource(pending({ dataSourceRef: SNAPSHOT_REF }, "Pending")), {
    kind: "snapshot",
    namespace: "apps",
    name: "snap",
  });
  deepStrictEqual(
    pendingSource(
      pending({ dataSourceRef: { kind: "VolumeSnapshot", name: "s", namespace: "x" } }),
    ),
    { kind: "snapshot", namespace: "x", name: "s" },
  );
  deepStrictEqual(pendingSource(pending({ dataSource: SNAPSHOT_REF }, "Bound")), undefined);
  deepStrictEqual(pendingSource(pending({ dataSource: { kind: "Backup", name: "b" } })), undefined);
  deepStrictEqual(
    pendingSource(pending({ dataSource: { kind: "VolumeSnapshot", apiGroup: "x.io", name: "s" } })),
    undefined,
  );
});

Deno.test("decideCloneFinalizer() removes the finalizer of a deleted source once no clone of it is Pending", () => {
  const deleted = sourceClaim({
    metadata: { deletionTimestamp: "2025-01-01T00:00:00Z", finalizers: [CLONE] },
  });
  const clone = pending(
    { dataSource: { kind: "PersistentVolumeClaim", name: "origin" } },
    "Pending",
  );
  const facts = { claims: [deleted, clone], holdsSource: true, waitedMs: 0 };
  deepStrictEqual(decideCloneFinalizer(deleted, facts), {
    kind: "wait",
    reason: "PVC 'data' is in 'Pending' state, cloning in progress",
  });
  const bound = { ...clone, status: { phase: "Bound" } };
  deepStrictEqual(decideCloneFinalizer(deleted, { ...facts, claims: [deleted, bound] }), {
    kind: "remove",
  });
  // A clone of a claim of the same name in another namespace does not count.
  const elsewhere = { ...clone, metadata: { ...clone.metadata, namespace: "other" } };
  deepStrictEqual(decideCloneFinalizer(deleted, { ...facts, claims: [elsewhere] }), {
    kind: "remove",
  });
});

Deno.test("decideCloneFinalizer() leaves claims alone that are not deleted or carry no finalizer", () => {
  const facts = { claims: [], holdsSource: true, waitedMs: 0 };
  deepStrictEqual(decideCloneFinalizer(undefined, facts), { kind: "none" });
  deepStrictEqual(decideCloneFinalizer(sourceClaim({ metadata: { finalizers: [CLONE] } }), facts), {
    kind: "none",
  });
  const deletedPlain = sourceClaim({ metadata: { deletionTimestamp: "2025-01-01T00:00:00Z" } });
  deepStrictEqual(decideCloneFinalizer(deletedPlain, facts), { kind: "none" });
});

Deno.test("decideCloneFinalizer(): the agent that does not hold the source stands in only after a while", () => {
  const deleted = sourceClaim({
    metadata: { deletionTimestamp: "2025-01-01T00:00:00Z", finalizers: [CLONE] },
  });
  deepStrictEqual(decideCloneFinalizer(deleted, { claims: [], holdsSource: false, waitedMs: 0 }), {
    kind: "standIn",
    ms: STAND_IN_DELAY_MS,
  });
  deepStrictEqual(
    decideCloneFinalizer(deleted, {
      claims: [],
      holdsSource: false,
      waitedMs: STAND_IN_DELAY_MS,
    }),
    { kind: "remove" },
  );
});

Deno.test("planSweep() removes a protection no Pending claim needs, when it was orphaned at the last sweep too", () => {
  const snapshot = (name: string, finalizers = [PROTECTION]): VolumeSnapshot =>
    volumeSnapshot({ metadata: { name, finalizers } });
  const snapshots = [snapshot("snap"), snapshot("orphan"), snapshot("plain", [])];
  const restoring = pending({ dataSource: SNAPSHOT_REF });
  const first = planSweep(snapshots, { claims: [restoring], previousOrphans: new Set() });
  deepStrictEqual(first.remove, []);
  deepStrictEqual([...first.orphans], ["apps/orphan"]);
  const second = planSweep(snapshots, { claims: [restoring], previousOrphans: first.orphans });
  deepStrictEqual(second.remove.map((s) => s.metadata.name), ["orphan"]);
  // The restore is bound: "snap" becomes an orphan, removed at the sweep after.
  const bound = { ...restoring, status: { phase: "Bound" } };
  const third = planSweep(snapshots, { claims: [bound], previousOrphans: second.orphans });
  deepStrictEqual(third.remove.map((s) => s.metadata.name), ["orphan"]);
  const fourth = planSweep(snapshots, { claims: [bound], previousOrphans: third.orphans });
  deepStrictEqual(fourth.remove.map((s) => s.metadata.name), ["snap", "orphan"]);
});
