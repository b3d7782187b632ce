/**
 * The delete path's decisions (upstream's handleProtectionFinalizer,
 * shouldDelete and Delete in sig-storage-lib-external-provisioner's
 * controller.go and pkg/controller/controller.go), pure: what to do with the
 * protection finalizer, whether this node deletes the volume, and with which
 * secret. The controller (controller.ts) loads the PV from the cache,
 * calls these, confirms a deletion against the PV read from the API server,
 * and carries the result out.
 */
import type { Segments } from "../csi/types.ts";
import { PV_PROTECTION_FINALIZER } from "../model/keys.ts";
import type { PersistentVolume, SecretReference, StorageClass } from "../model/objects.ts";
import { volumeIsAccessible } from "../topology/affinity.ts";
import { deletionSecretFromAnnotations } from "../secrets/annotations.ts";
import { resolveSecretReference } from "../secrets/references.ts";

/** What to do with `external-provisioner.volume.kubernetes.io/finalizer` (upstream handleProtectionFinalizer). */
type FinalizerChange = "add" | "remove" | "none";

/**
 * Adds the finalizer to a bound PV with reclaim policy Delete that is not
 * being deleted, so that its volume is deleted before the object goes;
 * removes it from Retain and Recycle PVs, whose volumes are never deleted.
 */
export function finalizerChange(pv: PersistentVolume): FinalizerChange {
  const has = pv.metadata.finalizers?.includes(PV_PROTECTION_FINALIZER) ?? false;
  const policy = pv.spec.persistentVolumeReclaimPolicy;
  if (policy === "Retain" || policy === "Recycle") return has ? "remove" : "none";
  const wanted = policy === "Delete" && pv.metadata.deletionTimestamp === undefined &&
    pv.status?.phase === "Bound";
  return wanted && !has ? "add" : "none";
}

/**
 * Whether sync could do anything with the PV as it is now: change the
 * protection finalizer, or (Released, reclaim policy Delete) delete its
 * volume. Upstream's volume handler queues every PV update and its
 * syncVolume then asks shouldDelete; here the volume queue is fed only PVs
 * for which this says yes (and those this agent is deleting), so that the
 * creation and binding updates of every PV in a burst of claims are not
 * queued, taken by a worker and found to need nothing.
 */
export function mayNeedDeleteWork(pv: PersistentVolume): boolean {
  return finalizerChange(pv) !== "none" || shouldDelete(pv) === undefined;
}

/** Where the DeleteVolume secret comes from. */
export type DeletionSecret =
  | { kind: "none" }
  /** Read this Secret; if it cannot be read, delete without secrets (as upstream) and say so. */
  | { kind: "read"; secret: SecretReference };

/** What this node's agent does with a PV. */
type DeleteDecision =
  | { kind: "ignore"; reason: string }
  /**
   * No node affinity: upstream lets every node's agent delete it through its
   * own driver. This agent refuses (Warning event and metric) and leaves the
   * volume to an operator.
   */
  | { kind: "refuse"; message: string }
  | { kind: "problem"; message: string }
  | { kind: "delete"; volumeId: string; secret: DeletionSecret; storageClassName: string };

/** Upstream shouldDelete: Released, reclaim policy Delete, and not already handled. */
function shouldDelete(pv: PersistentVolume): string | undefined {
  const being = pv.metadata.deletionTimestamp !== undefined;
  if (being && !(pv.metadata.finalizers?.includes(PV_PROTECTION_FINALIZER) ?? false)) {
    return "PV is being deleted without our finalizer: already handled";
  }
  if (pv.status?.phase !== "Released") {
    return `PV phase is ${pv.status?.phase ?? "unknown"}, not Released`;
  }
  if (pv.spec.persistentVolumeReclaimPolicy !== "Delete") {
    return `reclaim policy is ${pv.spec.persistentVolumeReclaimPolicy ?? "unset"}, not Delete`;
  }
  return undefined;
}

/** The message of a refused PV without node affinity. */
export function noAffinityMessage(pvName: string): string {
  return `PV ${pvName} has no node affinity, so no node can tell whether its volume lives there; ` +
    "this agent does not delete it (upstream would delete it on every node). " +
    "Delete the volume on its node by hand, then remove the PV (see docs/design.md, 'PVs without node affinity')";
}

/** Whether this node deletes the PV's volume now, and how. */
export function decideDelete(
  pv: PersistentVolume,
  context: { segment: Segments; storageClass: StorageClass | undefined },
): DeleteDecision {
  const name = pv.metadata.name;
  const notYet = shouldDelete(pv);
  if (notYet !== undefined) return { kind: "ignore", reason: notYet };
  if (pv.spec.csi === undefined || pv.spec.csi.volumeHandle === "") {
    return { kind: "problem", message: "invalid CSI PV" };
  }
  const accessibility = volumeIsAccessible(pv.spec.nodeAffinity, context.segment);
  switch (accessibility.kind) {
    case "notAccessible":
    case "noNodeTopology":
      return { kind: "ignore", reason: "PV was not provisioned on this node" };
    case "noAffinity":
      return { kind: "refuse", message: noAffinityMessage(name) };
    case "error":
      return { kind: "problem", message: accessibility.message };
    case "accessible":
      return {
        kind: "delete",
        volumeId: pv.spec.csi.volumeHandle,
        secret: deletionSecret(pv, context.storageClass),
        storageClassName: pv.spec.storageClassName ?? "",
      };
  }
}

/** What the PV as the API server has it now says of a deletion decided from the cache. */
type Confirmation =
  | { kind: "go" }
  /** The PV is gone or no longer to be deleted by this node: nothing to do. */
  | { kind: "skip"; reason: string }
  /** Still to be deleted, but with another volume or secret: decide again from a newer cache. */
  | { kind: "changed"; reason: string };

/**
 * Whether a deletion decided from the cached PV still holds for `fresh`, the
 * PV read from the API server right before DeleteVolume: the cache may be
 * behind by a stalled watch, and an administrator may have switched the PV
 * to Retain meanwhile. The same decideDelete over the fresh object, as
 * upstream's deleteVolumeOperation re-checks shouldDelete on a fresh GET.
 */
export function confirmDelete(
  decided: { volumeId: string; secret: DeletionSecret },
  fresh: PersistentVolume | undefined,
  context: { segment: Segments; storageClass: StorageClass | undefined },
): Confirmation {
  if (fresh === undefined) return { kind: "skip", reason: "PV is gone" };
  const now = decideDelete(fresh, context);
  switch (now.kind) {
    case "ignore":
      return { kind: "skip", reason: now.reason };
    case "refuse":
    case "problem":
      return { kind: "skip", reason: now.message };
    case "delete":
      if (now.volumeId !== decided.volumeId) {
        return { kind: "changed", reason: `volume handle is now ${now.volumeId}` };
      }
      if (JSON.stringify(now.secret) !== JSON.stringify(decided.secret)) {
        return { kind: "changed", reason: "deletion secret changed" };
      }
      return { kind: "go" };
  }
}

/**
 * Upstream handleSecretsForDeletion: the deletion-secret annotations, or for
 * PVs without them (provisioned by old versions) the provisioner secret of
 * the current StorageClass, expanded with the PV name and the claimRef.
 */
export function deletionSecret(
  pv: PersistentVolume,
  storageClass: StorageClass | undefined,
): DeletionSecret {
  const annotated = deletionSecretFromAnnotations(pv.metadata.annotations);
  if (annotated.kind === "annotated") {
    return annotated.secret === null
      ? { kind: "none" }
      : { kind: "read", secret: annotated.secret };
  }
  const claim = pv.spec.claimRef;
  if (storageClass === undefined || claim?.name === undefined || claim.namespace === undefined) {
    return { kind: "none" };
  }
  const resolved = resolveSecretReference("provisioner", {
    parameters: storageClass.parameters,
    className: storageClass.metadata.name,
    volumeName: pv.metadata.name,
    claim: { name: claim.name, namespace: claim.namespace },
  });
  return resolved.ok && resolved.value !== null
    ? { kind: "read", secret: resolved.value }
    : { kind: "none" };
}
