/** Builders of the objects the capacity tests use, with one node's defaults. */
import type { StorageClass } from "../../lib/model/objects.ts";
import type { StorageCapacity } from "../../lib/model/storage_capacity.ts";
import { nodeLabels } from "../../lib/model/labels.ts";

export const DRIVER = "test.csi.k8s.io";
export const NODE = "node-a";
export const NAMESPACE = "csi-provisioner";
export const TOPOLOGY_KEY = "topology.test.csi.k8s.io/node";
export const SEGMENT: Record<string, string> = { [TOPOLOGY_KEY]: NODE };
export const LABELS: Record<string, string> = nodeLabels(DRIVER, NODE);

/** A WaitForFirstConsumer class of the driver; an override of `undefined` removes the field. */
export function storageClass(
  name: string,
  overrides: { [K in keyof StorageClass]?: StorageClass[K] | undefined } = {},
): StorageClass {
  const built: Record<string, unknown> = {
    metadata: { name, uid: `uid-${name}`, resourceVersion: "1" },
    provisioner: DRIVER,
    parameters: { kind: "fast" },
    volumeBindingMode: "WaitForFirstConsumer",
    ...overrides,
  };
  for (const key of Object.keys(built)) if (built[key] === undefined) delete built[key];
  return built as unknown as StorageClass;
}

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
