/**
 * The Warning Events of lost volumes: on the PV, and on its claim, where
 * `kubectl describe` shows them. `cause` says why the volume is lost (its
 * node is gone, or its driver no longer has it). Pure.
 */
import type { EventRecord, EventSubject } from "../../model/events.ts";
import type { PersistentVolume } from "../../model/objects.ts";

export const LOST_NODE_VOLUME = "LostNodeVolume";
export const LOST_NODE_VOLUME_RELEASED = "LostNodeVolumeReleased";
export const LOST_NODE_CLAIM_DELETED = "LostNodeClaimDeleted";
export const LOST_NODE_CLAIM_NOT_DELETED = "LostNodeClaimNotDeleted";
export const VOLUME_MISSING_ON_DRIVER = "VolumeMissingOnDriver";

/** The cause of a node that is gone, for the messages. */
export function nodeGoneCause(node: string, sinceMs: number): string {
  return `its node ${node} is gone (its Node object deleted and not created again since ${
    new Date(sinceMs).toISOString()
  })`;
}

/** The cause of a volume its driver does not have. */
export function missingCause(pv: PersistentVolume, driver: string): string {
  return `CSI driver ${driver} no longer has its volume ${pv.spec.csi?.volumeHandle ?? "?"}`;
}

function pvSubject(pv: PersistentVolume): EventSubject {
  return { kind: "PersistentVolume", name: pv.metadata.name, uid: pv.metadata.uid ?? "" };
}

/** The claim of a PV as an Event subject, when it has one. */
export function claimSubject(pv: PersistentVolume): EventSubject | undefined {
  const ref = pv.spec.claimRef;
  if (ref?.name === undefined || ref.namespace === undefined || ref.uid === undefined) {
    return undefined;
  }
  return { kind: "PersistentVolumeClaim", namespace: ref.namespace, name: ref.name, uid: ref.uid };
}

function warning(subject: EventSubject, reason: string, message: string): EventRecord {
  return { subject, type: "Warning", reason, message };
}

/** Released and deleted: its finalizer removed, no DeleteVolume (nobody can run it). */
export function releasedEvent(pv: PersistentVolume, cause: string): EventRecord {
  return warning(
    pvSubject(pv),
    LOST_NODE_VOLUME_RELEASED,
    `PersistentVolume ${pv.metadata.name} was Released and ${cause}: removed the provisioner's finalizer and deleted the PV without DeleteVolume, whose data is lost with its node.`,
  );
}

/** A volume reported (Bound, or Retain): on the PV and its claim. */
export function reportedEvents(
  pv: PersistentVolume,
  cause: string,
  what: { claimDeleted: boolean; reason?: string },
): EventRecord[] {
  const bound = pv.status?.phase === "Bound";
  const next = !bound
    ? "its reclaimPolicy is not Delete, so it is kept: delete it when it is no longer needed."
    : what.claimDeleted
    ? "its StorageClass opts in, so its claim is deleted."
    : 'its pods cannot run with it: delete the claim so that it is provisioned again, or annotate the StorageClass csi-node-provisioner.io/delete-claims-of-lost-nodes: "true" to have that done (with --node-loss-release-after).';
  const message = `PersistentVolume ${pv.metadata.name} is ${
    pv.status?.phase ?? "?"
  } and ${cause}; ${next}`;
  const reason = what.reason ?? LOST_NODE_VOLUME;
  const claim = claimSubject(pv);
  return [
    warning(pvSubject(pv), reason, message),
    ...(bound && claim !== undefined ? [warning(claim, reason, message)] : []),
  ];
}

/** The claim of a lost volume deleted, as its class opts in. */
export function claimDeletedEvent(pv: PersistentVolume, cause: string): EventRecord | undefined {
  const claim = claimSubject(pv);
  if (claim === undefined) return undefined;
  return warning(
    claim,
    LOST_NODE_CLAIM_DELETED,
    `Deleted claim ${claim.namespace}/${claim.name}: its PersistentVolume ${pv.metadata.name} ${cause}, and StorageClass ${pv.spec.storageClassName} has csi-node-provisioner.io/delete-claims-of-lost-nodes: "true". A StatefulSet creates it again, provisioned on a live node.`,
  );
}

/**
 * The API server refused the claim's deletion: RBAC without delete on
 * claims, or the node-confinement policy, which lets no agent delete a claim
 * of another node. `refusal` is the server's message, which tells which.
 */
export function claimForbiddenEvent(
  pv: PersistentVolume,
  refusal: string,
): EventRecord | undefined {
  const claim = claimSubject(pv);
  if (claim === undefined) return undefined;
  return warning(
    claim,
    LOST_NODE_CLAIM_NOT_DELETED,
    `Cannot delete claim ${claim.namespace}/${claim.name} of a lost volume: the API server refused it (${refusal}). Without the verb delete on persistentvolumeclaims (deploy/rbac.yaml grants it, upstream's rbac.yaml does not), grant it; with deploy/components/node-confinement, no agent may delete another node's claim. Delete the claim by hand.`,
  );
}
