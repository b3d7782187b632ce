/**
 * Which of this node's PVs to check against the driver at start, how to
 * ask it, and which it no longer has. A Node re-created with the same name
 * is no lost node, but its disks may be new: only the driver can tell. PVs
 * being deleted or Released are left to the delete path (DeleteVolume of a
 * missing volume succeeds). Pure.
 */
import type { ControllerCapabilityType, Segments } from "../../csi/types.ts";
import type { PersistentVolume } from "../../model/objects.ts";
import { accessibilityOn } from "../../topology/affinity.ts";

/** How the driver is asked whether it has a volume. */
export type VolumeCheck = "list" | "get" | "none";

/** ListVolumes where offered, else ControllerGetVolume, else nothing. */
export function volumeCheck(capabilities: ReadonlySet<ControllerCapabilityType>): VolumeCheck {
  if (capabilities.has("LIST_VOLUMES")) return "list";
  if (capabilities.has("GET_VOLUME")) return "get";
  return "none";
}

/** The PVs to check: on this node (by their affinity), with a volume handle, in use. */
export function volumesToCheck(
  pvs: readonly PersistentVolume[],
  segment: Segments | null,
): PersistentVolume[] {
  const accessibility = accessibilityOn(segment);
  return pvs.filter((pv) =>
    pv.spec.csi?.volumeHandle !== undefined &&
    pv.metadata.deletionTimestamp === undefined &&
    pv.status?.phase === "Bound" &&
    accessibility(pv.spec.nodeAffinity).kind === "accessible"
  );
}

/** Those whose volume handle the driver did not list. */
export function missingFrom(
  pvs: readonly PersistentVolume[],
  listed: ReadonlySet<string>,
): PersistentVolume[] {
  return pvs.filter((pv) => !listed.has(pv.spec.csi!.volumeHandle));
}
