/**
 * Builders for the resize tests: a bound claim of this node's volume that
 * asks for more than it has, and its PV.
 */
import type { Claim, ClaimStatus, PersistentVolume } from "../../lib/model/objects.ts";
import { claim, CLAIM_UID, DRIVER } from "./provision.ts";

export const PV_NAME = "pvc-0f8b4c2e";

/** A Bound 1Gi claim whose request is `request` (default 2Gi). */
export function boundClaim(
  options: { request?: string; status?: Partial<ClaimStatus>; resourceVersion?: string } = {},
): Claim {
  const base = claim({
    spec: { volumeName: PV_NAME, resources: { requests: { storage: options.request ?? "2Gi" } } },
    metadata: { resourceVersion: options.resourceVersion ?? "42" },
  });
  return {
    ...base,
    status: { phase: "Bound", capacity: { storage: "1Gi" }, ...options.status },
  };
}

/** The claim's PV, of `capacity` (default 1Gi). */
export function boundVolume(capacity = "1Gi"): PersistentVolume {
  return {
    metadata: { name: PV_NAME, resourceVersion: "7" },
    spec: {
      accessModes: ["ReadWriteOnce"],
      capacity: { storage: capacity },
      csi: { driver: DRIVER, volumeHandle: "vol-1", fsType: "ext4" },
      claimRef: { namespace: "apps", name: "data", uid: CLAIM_UID },
      storageClassName: "fast",
      volumeMode: "Filesystem",
      mountOptions: ["noatime"],
    },
    status: { phase: "Bound" },
  };
}
