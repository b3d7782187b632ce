/** Builders of the CSIStorageCapacity objects the capacity tests use, of this node. */
import type { StorageCapacity } from "../../lib/model/storage_capacity.ts";
import { LABELS, SEGMENT } from "./provision.ts";

export const NAMESPACE = "csi-provisioner";

/** An object of this node for the class, as the informer caches it. */
export function capacityObject(
  name: string,
  options: {
    storageClassName?: string;
    capacity?: string;
    maximumVolumeSize?: string;
    segment?: Record<string, string>;
    created?: string;
    resourceVersion?: string;
    ownerReferences?: StorageCapacity["metadata"]["ownerReferences"];
    deleting?: boolean;
  } = {},
): StorageCapacity {
  const object: StorageCapacity = {
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: `uid-${name}`,
      resourceVersion: options.resourceVersion ?? "10",
      creationTimestamp: options.created ?? "2026-01-01T00:00:00Z",
      labels: { ...LABELS },
    },
    storageClassName: options.storageClassName ?? "fast",
    nodeTopology: { matchLabels: options.segment ?? SEGMENT },
    capacity: options.capacity ?? "10Gi",
  };
  if (options.maximumVolumeSize !== undefined) {
    object.maximumVolumeSize = options.maximumVolumeSize;
  }
  if (options.ownerReferences !== undefined) {
    object.metadata.ownerReferences = options.ownerReferences;
  }
  if (options.deleting) object.metadata.deletionTimestamp = "2026-01-01T00:00:01Z";
  return object;
}

export const GiB = 1024n ** 3n;
