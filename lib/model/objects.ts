/**
 * The Kubernetes objects the agent reads and writes, as plain data in the API's
 * own JSON shape, cut down to the fields the agent uses. Informer caches hold
 * these trimmed copies (no managedFields, no status it never reads), which is
 * what keeps memory flat when the cluster holds many claims and volumes.
 */

/** Label selector requirement / node selector requirement. */
export interface SelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/** One term of StorageClass.allowedTopologies. */
export interface TopologySelectorTerm {
  matchLabelExpressions?: { key: string; values: string[] }[];
}

/** A node selector term of a PV's node affinity. */
export interface NodeSelectorTerm {
  matchExpressions?: SelectorRequirement[];
  matchFields?: SelectorRequirement[];
}

/** PV node affinity. */
export interface VolumeNodeAffinity {
  required?: { nodeSelectorTerms: NodeSelectorTerm[] };
}

/** A reference to a data source of a claim. */
export interface DataSourceReference {
  apiGroup?: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** Object metadata the agent reads. */
export interface Metadata {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
}

/** PersistentVolumeClaim (trimmed). */
export interface Claim {
  metadata: Metadata & { namespace: string };
  spec: {
    accessModes?: string[];
    resources?: { requests?: { storage?: string } };
    storageClassName?: string | null;
    volumeMode?: string;
    volumeName?: string;
    /** Only its presence matters: claims with a selector are refused. */
    selector?: unknown;
    dataSource?: DataSourceReference;
    dataSourceRef?: DataSourceReference;
    volumeAttributesClassName?: string;
  };
  status?: ClaimStatus;
}

/** A claim's condition, as the API carries it. */
export interface ClaimCondition {
  type: string;
  status: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

/**
 * A claim's status: its phase, and for a bound claim of this node the fields
 * volume expansion reads and writes.
 */
export interface ClaimStatus {
  phase?: string;
  capacity?: { storage?: string };
  conditions?: ClaimCondition[];
  allocatedResources?: { storage?: string };
  allocatedResourceStatuses?: { storage?: string };
}

/** StorageClass (trimmed). */
export interface StorageClass {
  metadata: Metadata;
  provisioner: string;
  parameters?: Record<string, string>;
  reclaimPolicy?: string;
  mountOptions?: string[];
  volumeBindingMode?: string;
  allowedTopologies?: TopologySelectorTerm[];
  allowVolumeExpansion?: boolean;
}

/** VolumeAttributesClass (storage.k8s.io/v1). */
export interface VolumeAttributesClass {
  metadata: Metadata;
  driverName: string;
  parameters?: Record<string, string>;
}

/** A reference to a Secret, as on PV spec.csi. */
export interface SecretReference {
  name: string;
  namespace: string;
}

/** The CSI part of a PV spec. */
export interface CsiVolumeSource {
  driver: string;
  volumeHandle: string;
  readOnly?: boolean;
  fsType?: string;
  volumeAttributes?: Record<string, string>;
  controllerPublishSecretRef?: SecretReference;
  nodeStageSecretRef?: SecretReference;
  nodePublishSecretRef?: SecretReference;
  controllerExpandSecretRef?: SecretReference;
  nodeExpandSecretRef?: SecretReference;
}

/** claimRef of a PV. */
interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

/** PersistentVolume: the full shape the agent creates, and the trimmed shape it caches. */
export interface PersistentVolume {
  apiVersion?: "v1";
  kind?: "PersistentVolume";
  metadata: Omit<Metadata, "uid" | "resourceVersion"> & { uid?: string; resourceVersion?: string };
  spec: {
    accessModes?: string[];
    capacity?: { storage: string };
    csi?: CsiVolumeSource;
    claimRef?: ObjectReference;
    persistentVolumeReclaimPolicy?: string;
    storageClassName?: string;
    mountOptions?: string[];
    volumeMode?: string;
    nodeAffinity?: VolumeNodeAffinity;
    volumeAttributesClassName?: string;
  };
  status?: { phase?: string };
}

/**
 * VolumeSnapshot (snapshot.storage.k8s.io/v1), trimmed to what a restore
 * checks and where its source lives. `restoreSize` is a Quantity.
 */
export interface VolumeSnapshot {
  metadata: Metadata & { namespace: string };
  spec: {
    source: { persistentVolumeClaimName?: string; volumeSnapshotContentName?: string };
  };
  status?: {
    boundVolumeSnapshotContentName?: string;
    readyToUse?: boolean;
    restoreSize?: string;
  };
}

/** VolumeSnapshotContent (snapshot.storage.k8s.io/v1, cluster-scoped), trimmed. */
export interface VolumeSnapshotContent {
  metadata: Metadata;
  spec: {
    driver: string;
    volumeSnapshotRef: ObjectReference;
    /** Filesystem or Block: the mode of the volume the snapshot was taken of. */
    sourceVolumeMode?: string;
    /** One of: a dynamic snapshot's source volume, or a pre-provisioned snapshot's handle. */
    source: { volumeHandle?: string; snapshotHandle?: string };
  };
  status?: { snapshotHandle?: string };
}

/** An owner reference as the API carries it. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** A label selector; CSIStorageCapacity.nodeTopology. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** An object's identity and owners. */
export interface ObjectIdentity {
  uid: string;
  ownerReferences: OwnerReference[];
}

/** Names a namespaced object by type, namespace and name. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** "namespace/name", or "name" for cluster-scoped objects: the queue key. */
export function objectKey(metadata: { name: string; namespace?: string | undefined }): string {
  return metadata.namespace === undefined || metadata.namespace === ""
    ? metadata.name
    : `${metadata.namespace}/${metadata.name}`;
}
