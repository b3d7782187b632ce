/**
 * CSIStorageCapacity (storage.k8s.io/v1) as the agent keeps and writes it:
 * the trimmed shape its informer caches, what a new object is made of, and
 * what an update changes. Plain data in the API's own JSON shape.
 */
import type { LabelSelector, OwnerReference } from "./objects.ts";

/** CSIStorageCapacity (trimmed when cached; complete enough to create). */
export interface StorageCapacity {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    ownerReferences?: OwnerReference[];
  };
  storageClassName: string;
  nodeTopology?: LabelSelector;
  /** A Kubernetes quantity, e.g. "10Gi". */
  capacity?: string;
  maximumVolumeSize?: string;
}

/** What a new object is made of; the API server picks the name from `generateName`. */
export interface NewStorageCapacity {
  metadata: {
    generateName: string;
    labels: Record<string, string>;
    ownerReferences?: OwnerReference[];
  };
  storageClassName: string;
  nodeTopology: LabelSelector;
  capacity: string;
  maximumVolumeSize?: string;
}

/** The fields an update changes; `null` removes maximumVolumeSize. */
export interface StorageCapacityChange {
  capacity: string;
  maximumVolumeSize: string | null;
  ownerReferences?: OwnerReference[];
}

/**
 * A CSIStorageCapacity of any node of the driver, cut to what the Immediate
 * binding race reads about the other nodes: who published it, for which
 * class and segment, and how much fits. A few hundred bytes per object, so
 * that every agent can keep those of every node.
 */
export interface PublishedCapacity {
  /** The csi.storage.k8s.io/managed-by label: one value per publishing agent. */
  publisher: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** The Node that owns it (--capacity-owner-node), if one does. */
  ownerNode?: { name: string; uid: string };
  storageClassName: string;
  /** nodeTopology.matchLabels: the publisher's topology segment. */
  segment: Record<string, string>;
  /** capacity in bytes; undefined when absent or not a quantity. */
  capacityBytes: bigint | undefined;
  /** maximumVolumeSize in bytes, when set. */
  maximumVolumeSizeBytes?: bigint;
}
