/**
 * The pure decisions of the protection controllers: which claims are
 * Pending restores or clones and of what (external-provisioner
 * clone_controller.go `syncClaim`, snapshot_finalizer_controller.go
 * `buildPendingSnapshotIndex`), when a source claim's cloning-protection
 * finalizer may go, and which VolumeSnapshots' source-protection finalizers
 * are orphaned.
 */
import {
  CLONE_PROTECTION_FINALIZER,
  SNAPSHOT_API_GROUP,
  SNAPSHOT_SOURCE_PROTECTION_FINALIZER,
} from "../model/keys.ts";
import type { Claim, VolumeSnapshot } from "../model/objects.ts";

/** A Pending claim's data source: the claim to clone or the snapshot to restore. */
interface PendingSource {
  kind: "clone" | "snapshot";
  namespace: string;
  name: string;
}

/**
 * Phase Pending, or none yet. Upstream's clone controller counts only
 * Pending (a clone created a moment ago, without a phase, would not hold its
 * source); its snapshot sweep counts both, and so do both here.
 */
function isPending(claim: Claim): boolean {
  const phase = claim.status?.phase ?? "";
  return phase === "Pending" || phase === "";
}

/**
 * The source of a Pending claim, from spec.dataSource, else
 * spec.dataSourceRef (whose namespace may differ); undefined when it has
 * none or is not Pending.
 */
export function pendingSource(claim: Claim): PendingSource | undefined {
  if (!isPending(claim)) return undefined;
  const candidates = [
    { ref: claim.spec.dataSource ?? undefined, crossNamespace: false },
    { ref: claim.spec.dataSourceRef ?? undefined, crossNamespace: true },
  ];
  for (const { ref, crossNamespace } of candidates) {
    if (ref === undefined) continue;
    const namespace = crossNamespace && ref.namespace ? ref.namespace : claim.metadata.namespace;
    const group = ref.apiGroup ?? "";
    if (ref.kind === "VolumeSnapshot" && (group === "" || group === SNAPSHOT_API_GROUP)) {
      return { kind: "snapshot", namespace, name: ref.name };
    }
    if (ref.kind === "PersistentVolumeClaim" && group === "") {
      return { kind: "clone", namespace, name: ref.name };
    }
  }
  return undefined;
}

/**
 * How long an agent that does not hold the source volume waits before it
 * removes the finalizer itself: the holder's agent removes it at once, the
 * others step in only if it did not (e.g. its node is gone).
 */
export const STAND_IN_DELAY_MS = 30_000;

/** What to do about a source claim's cloning-protection finalizer. */
type CloneFinalizerDecision =
  /** Not a deleted source claim with the finalizer: nothing to do. */
  | { kind: "none" }
  /** A clone of it is still Pending: look again later. */
  | { kind: "wait"; reason: string }
  /** Another node's agent should remove it: look again after `ms`. */
  | { kind: "standIn"; ms: number }
  | { kind: "remove" };

/**
 * `syncClaim`: the finalizer of a claim being deleted goes once no claim
 * of its namespace is a Pending clone of it.
 */
export function decideCloneFinalizer(
  claim: Claim | undefined,
  facts: { claims: readonly Claim[]; holdsSource: boolean; waitedMs: number },
): CloneFinalizerDecision {
  if (claim === undefined) return { kind: "none" };
  if (!claim.metadata.finalizers?.includes(CLONE_PROTECTION_FINALIZER)) return { kind: "none" };
  if (!claim.metadata.deletionTimestamp) return { kind: "none" };
  const { namespace, name } = claim.metadata;
  const clone = facts.claims.find((candidate) => {
    const source = pendingSource(candidate);
    return candidate.metadata.namespace === namespace && source?.kind === "clone" &&
      source.namespace === namespace && source.name === name;
  });
  if (clone !== undefined) {
    return {
      kind: "wait",
      reason: `PVC '${clone.metadata.name}' is in 'Pending' state, cloning in progress`,
    };
  }
  if (!facts.holdsSource && facts.waitedMs < STAND_IN_DELAY_MS) {
    return { kind: "standIn", ms: STAND_IN_DELAY_MS - facts.waitedMs };
  }
  return { kind: "remove" };
}

/** "namespace/name". */
export function sourceKey(source: { namespace: string; name: string }): string {
  return `${source.namespace}/${source.name}`;
}

/**
 * The orphan sweep: protected snapshots that no Pending claim restores
 * from. A snapshot is removed only when it was an orphan at the previous
 * sweep too, so that a claim the claim cache has not seen yet (a watch that
 * is behind) cannot lose its protection; `orphans` is the set to pass to
 * the next sweep.
 */
export function planSweep(
  snapshots: readonly VolumeSnapshot[],
  options: { claims: readonly Claim[]; previousOrphans: ReadonlySet<string> },
): { remove: VolumeSnapshot[]; orphans: Set<string> } {
  const restoring = new Set<string>();
  for (const claim of options.claims) {
    const source = pendingSource(claim);
    if (source?.kind === "snapshot") restoring.add(sourceKey(source));
  }
  const orphans = new Set<string>();
  const remove: VolumeSnapshot[] = [];
  for (const snapshot of snapshots) {
    const key = sourceKey(snapshot.metadata);
    const isProtected = snapshot.metadata.finalizers?.includes(
      SNAPSHOT_SOURCE_PROTECTION_FINALIZER,
    );
    if (!isProtected || restoring.has(key)) continue;
    orphans.add(key);
    if (options.previousOrphans.has(key)) remove.push(snapshot);
  }
  return { remove, orphans };
}
