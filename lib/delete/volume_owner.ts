/**
 * Which PersistentVolumes are this agent's concern: those of its driver
 * (upstream's isProvisionerForVolume) that live on this node, or that carry
 * no node affinity at all (kept so that the delete path can refuse them with
 * a Warning instead of every node deleting them). All others are not even
 * cached, which keeps the PV cache the size of this node's volumes.
 */
import type { Segments } from "../csi/types.ts";
import { ANN_MIGRATED_TO, ANN_PROVISIONED_BY } from "../model/keys.ts";
import type { PersistentVolume } from "../model/objects.ts";
import { accessibilityOn } from "../topology/affinity.ts";

/** Whether the PV was provisioned by (or migrated to) this driver. */
export function isDriversVolume(pv: PersistentVolume, driverName: string): boolean {
  const annotations = pv.metadata.annotations ?? {};
  if (annotations[ANN_MIGRATED_TO] === driverName) return true;
  const provisionedBy = annotations[ANN_PROVISIONED_BY];
  if (provisionedBy !== undefined) return provisionedBy === driverName;
  return pv.spec.csi?.driver === driverName;
}

/** Whether this node's agent keeps a PV in its cache; asked of every PV event. */
export function thisNodesConcern(
  options: { driverName: string; segment: Segments },
): (pv: PersistentVolume) => boolean {
  const accessibility = accessibilityOn(options.segment);
  return (pv) => {
    if (!isDriversVolume(pv, options.driverName)) return false;
    const { kind } = accessibility(pv.spec.nodeAffinity);
    return kind === "accessible" || kind === "noAffinity" || kind === "error";
  };
}
