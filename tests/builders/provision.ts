/**
 * Builders for the provisioning tests: a claim, a class and the options a
 * node agent runs with, each overridable field by field.
 */
import type {
  Claim,
  PersistentVolume,
  StorageClass,
  VolumeAttributesClass,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from "../../lib/model/objects.ts";
import type { CreateVolumeResponse, Volume } from "../../lib/csi/types.ts";
import { nodeLabels } from "../../lib/model/labels.ts";
import type { ClaimDecisionOptions } from "../../lib/provision/decide.ts";
import type { PersistentVolumeOptions } from "../../lib/provision/pv/persistent_volume.ts";
import type { ProvisionOptions } from "../../lib/provision/request/request.ts";

export const DRIVER = "hostpath.csi.k8s.io";
export const NODE = "node-a";
export const TOPOLOGY_KEY = "topology.hostpath.csi/node";
/** This node's topology segment, as the driver reports it. */
export const SEGMENT: Record<string, string> = { [TOPOLOGY_KEY]: NODE };
/** The labels this node's agent selects its own objects by. */
export const LABELS: Record<string, string> = nodeLabels(DRIVER, NODE);
export const CLAIM_UID = "0f8b4c2e-1a2b-4c3d-8e9f-0a1b2c3d4e5f";

/** The PV's secret references of a class that names no secret. */
export const NO_PV_SECRETS = {
  controllerPublish: null,
  nodeStage: null,
  nodePublish: null,
  controllerExpand: null,
  nodeExpand: null,
  controllerModify: null,
} as const;

/** Deep-enough overrides for a claim. */
export interface ClaimOverrides {
  metadata?: Partial<Claim["metadata"]>;
  spec?: Partial<Claim["spec"]>;
}

/** A WaitForFirstConsumer claim for our driver, selected to our node, 1Gi RWO. */
export function claim(overrides: ClaimOverrides = {}): Claim {
  return {
    metadata: {
      name: "data",
      namespace: "apps",
      uid: CLAIM_UID,
      resourceVersion: "42",
      annotations: {
        "volume.kubernetes.io/storage-provisioner": DRIVER,
        "volume.kubernetes.io/selected-node": NODE,
      },
      ...overrides.metadata,
    },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "1Gi" } },
      storageClassName: "fast",
      volumeMode: "Filesystem",
      ...overrides.spec,
    },
  };
}

/** A WaitForFirstConsumer class for our driver. */
export function storageClass(overrides: Partial<StorageClass> = {}): StorageClass {
  return {
    metadata: { name: "fast", uid: "sc-uid", resourceVersion: "7" },
    provisioner: DRIVER,
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
    ...overrides,
  };
}

/**
 * The class `name` of our driver, with a parameter for GetCapacity; an
 * override of `undefined` removes the field.
 */
export function namedClass(
  name: string,
  overrides: { [K in keyof StorageClass]?: StorageClass[K] | undefined } = {},
): StorageClass {
  const built: Record<string, unknown> = {
    ...storageClass({ metadata: { name, uid: `uid-${name}`, resourceVersion: "1" } }),
    parameters: { kind: "fast" },
    ...overrides,
  };
  for (const key of Object.keys(built)) if (built[key] === undefined) delete built[key];
  return built as unknown as StorageClass;
}

/** A VolumeAttributesClass for our driver. */
export function volumeAttributesClass(
  overrides: Partial<VolumeAttributesClass> = {},
): VolumeAttributesClass {
  return {
    metadata: { name: "gold", uid: "vac-uid", resourceVersion: "3" },
    driverName: DRIVER,
    parameters: { iops: "5000" },
    ...overrides,
  };
}

/** The default flags of a node agent with a topology-aware driver. */
export function provisionOptions(overrides: Partial<ProvisionOptions> = {}): ProvisionOptions {
  return {
    driverName: DRIVER,
    nodeName: NODE,
    volumeNamePrefix: "pvc",
    volumeNameUuidLength: -1,
    extraCreateMetadata: false,
    defaultFstype: "",
    strictTopology: false,
    topologySupported: true,
    segment: { ...SEGMENT },
    capabilities: { controllerService: true, controller: ["CREATE_DELETE_VOLUME"] },
    volumeAttributesClassEnabled: true,
    crossNamespaceVolumeDataSource: false,
    preventVolumeModeConversion: true,
    ...overrides,
  };
}

/** Who the node agent is, for the claim decisions: Immediate binding allowed. */
export function claimDecisionOptions(
  overrides: Partial<ClaimDecisionOptions> = {},
): ClaimDecisionOptions {
  return { driverName: DRIVER, nodeName: NODE, immediateBinding: true, ...overrides };
}

/** The driver's answer to CreateVolume: a 1 GiB volume on this node. */
export function createdVolume(overrides: Partial<Volume> = {}): CreateVolumeResponse {
  return {
    volume: {
      capacity_bytes: "1073741824",
      volume_id: "vol-1",
      volume_context: {},
      content_source: null,
      accessible_topology: [{ segments: { ...SEGMENT } }],
      ...overrides,
    },
  };
}

/** The PV options of a node agent with a topology-aware driver, on node-a. */
export function persistentVolumeOptions(
  overrides: Partial<PersistentVolumeOptions> = {},
): PersistentVolumeOptions {
  return {
    driverName: DRIVER,
    identity: "123-4-driver-node-a",
    controllerPublishReadonly: false,
    topologySupported: true,
    node: { name: NODE, segment: { ...SEGMENT }, labels: { ...LABELS } },
    ...overrides,
  };
}

/** The data sources of the restore and clone tests, in namespace "apps". */
export const SOURCE_HANDLE = "vol-origin";
export const SNAPSHOT_HANDLE = "snap-handle-1";

/** A bound 1Gi claim "origin", the source of a clone. */
export function sourceClaim(overrides: ClaimOverrides & { status?: Claim["status"] } = {}): Claim {
  return {
    ...claim({
      metadata: {
        name: "origin",
        uid: "origin-uid",
        annotations: { "volume.kubernetes.io/storage-provisioner": DRIVER },
        ...overrides.metadata,
      },
      spec: { volumeName: "pv-origin", ...overrides.spec },
    }),
    status: overrides.status ?? { phase: "Bound" },
  };
}

/** The PV of "origin" on `node` (default: ours). */
export function sourceVolume(
  overrides: { node?: string; spec?: Partial<PersistentVolume["spec"]>; phase?: string } = {},
): PersistentVolume {
  return {
    metadata: { name: "pv-origin", uid: "pv-origin-uid", resourceVersion: "9" },
    spec: {
      accessModes: ["ReadWriteOnce"],
      capacity: { storage: "1Gi" },
      csi: { driver: DRIVER, volumeHandle: SOURCE_HANDLE },
      claimRef: { namespace: "apps", name: "origin", uid: "origin-uid" },
      storageClassName: "fast",
      volumeMode: "Filesystem",
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{
            matchExpressions: [{
              key: TOPOLOGY_KEY,
              operator: "In",
              values: [overrides.node ?? NODE],
            }],
          }],
        },
      },
      ...overrides.spec,
    },
    status: { phase: overrides.phase ?? "Bound" },
  };
}

/** A ready VolumeSnapshot "snap" of "origin", bound to content "snapcontent-1". */
export function volumeSnapshot(
  overrides: {
    metadata?: Partial<VolumeSnapshot["metadata"]>;
    status?: VolumeSnapshot["status"];
  } = {},
): VolumeSnapshot {
  return {
    metadata: {
      name: "snap",
      namespace: "apps",
      uid: "snap-uid",
      resourceVersion: "11",
      ...overrides.metadata,
    },
    spec: { source: { persistentVolumeClaimName: "origin" } },
    status: overrides.status ??
      { boundVolumeSnapshotContentName: "snapcontent-1", readyToUse: true, restoreSize: "1Gi" },
  };
}

/** The content of "snap", taken of SOURCE_HANDLE by our driver. */
export function snapshotContent(
  overrides: {
    metadata?: Partial<VolumeSnapshotContent["metadata"]>;
    spec?: Partial<VolumeSnapshotContent["spec"]>;
    status?: VolumeSnapshotContent["status"];
  } = {},
): VolumeSnapshotContent {
  return {
    metadata: {
      name: "snapcontent-1",
      uid: "content-uid",
      resourceVersion: "12",
      ...overrides.metadata,
    },
    spec: {
      driver: DRIVER,
      volumeSnapshotRef: { namespace: "apps", name: "snap", uid: "snap-uid" },
      sourceVolumeMode: "Filesystem",
      source: { volumeHandle: SOURCE_HANDLE },
      ...overrides.spec,
    },
    status: overrides.status ?? { snapshotHandle: SNAPSHOT_HANDLE },
  };
}
