/**
 * A lost node's volumes, and what becomes of each: which PVs of the driver
 * were that node's (its agent's labels; for PVs made by upstream's sidecar,
 * which carry none, a node affinity whose one term is the node's topology
 * segment), and for each the action once the node counts as lost. A volume
 * whose node is gone can never be deleted by DeleteVolume, so a Released
 * one with reclaimPolicy Delete only loses the finalizer that waits for it.
 * A Bound one is never deleted (kubernetes.io/pv-protection holds it while
 * its claim exists); its claim is deleted only where its StorageClass opts
 * in. Pure.
 */
import type { Segments } from "../../csi/types.ts";
import { MANAGED_BY_LABEL } from "../../model/keys.ts";
import { nodeLabels } from "../../model/labels.ts";
import type { PersistentVolume, StorageClass } from "../../model/objects.ts";
import { isDriversVolume } from "../volume_owner.ts";

/** The StorageClass annotation that lets the claims of a lost node's Bound PVs be deleted. */
export const ANN_DELETE_CLAIMS_OF_LOST_NODES =
  "csi-node-provisioner.io/delete-claims-of-lost-nodes";

/** Of all PVs, those of the driver that were `node`'s. */
export function lostNodeVolumes(
  pvs: readonly PersistentVolume[],
  lost: { driverName: string; node: string; segment: Segments | undefined },
): PersistentVolume[] {
  const labels = nodeLabels(lost.driverName, lost.node);
  return pvs.filter((pv) => {
    if (!isDriversVolume(pv, lost.driverName)) return false;
    const own = pv.metadata.labels ?? {};
    if (own[MANAGED_BY_LABEL] !== undefined) {
      return Object.entries(labels).every(([key, value]) => own[key] === value);
    }
    return lost.segment !== undefined && affinityIsSegment(pv, lost.segment);
  });
}

/** Whether the PV's node affinity is one term requiring exactly the segment's labels. */
function affinityIsSegment(pv: PersistentVolume, segment: Segments): boolean {
  const terms = pv.spec.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  if (terms.length !== 1 || (terms[0]!.matchFields?.length ?? 0) > 0) return false;
  const expressions = terms[0]!.matchExpressions ?? [];
  const keys = Object.keys(segment);
  if (keys.length === 0 || expressions.length !== keys.length) return false;
  return expressions.every((e) =>
    e.operator === "In" && e.values?.length === 1 && segment[e.key] === e.values[0]
  );
}

/** What becomes of one volume of a lost node (or one its driver no longer has). */
export type LostVolumeAction =
  /** Released, reclaimPolicy Delete: the finalizer goes, then the PV (UID precondition). */
  | { kind: "release" }
  /** Reported only (Retain, or Bound without the class's opt-in). */
  | { kind: "report" }
  /** Bound, and its class opts in: reported, and its claim is deleted (UID precondition). */
  | { kind: "deleteClaim"; claim: { namespace: string; name: string; uid: string } }
  /** Nothing to do (Available, Pending, or a claim reference without a UID). */
  | { kind: "none" };

/** Decides for one PV; `classOf` finds its StorageClass (undefined when it is gone). */
export function lostVolumeAction(
  pv: PersistentVolume,
  classOf: (name: string) => StorageClass | undefined,
): LostVolumeAction {
  const phase = pv.status?.phase;
  if (phase === "Released") {
    return pv.spec.persistentVolumeReclaimPolicy === "Delete"
      ? { kind: "release" }
      : { kind: "report" };
  }
  if (phase !== "Bound") return { kind: "none" };
  const ref = pv.spec.claimRef;
  if (ref?.name === undefined || ref.namespace === undefined || ref.uid === undefined) {
    return { kind: "none" };
  }
  const className = pv.spec.storageClassName ?? "";
  const optIn = classOf(className)?.metadata.annotations?.[ANN_DELETE_CLAIMS_OF_LOST_NODES];
  return optIn === "true"
    ? { kind: "deleteClaim", claim: { namespace: ref.namespace, name: ref.name, uid: ref.uid } }
    : { kind: "report" };
}
