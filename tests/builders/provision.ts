/**
 * Builders for the provisioning tests: a claim, a class and the options a
 * node agent runs with, each overridable field by field.
 */
import type { Claim, StorageClass, VolumeAttributesClass } from "../../lib/model/objects.ts";
import type { ProvisionOptions } from "../../lib/provision/request.ts";

export const DRIVER = "hostpath.csi.k8s.io";
export const NODE = "node-a";
export const TOPOLOGY_KEY = "topology.hostpath.csi/node";
export const CLAIM_UID = "0f8b4c2e-1a2b-4c3d-8e9f-0a1b2c3d4e5f";

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
    segment: { [TOPOLOGY_KEY]: NODE },
    capabilities: { controllerService: true, controller: ["CREATE_DELETE_VOLUME"] },
    volumeAttributesClassEnabled: true,
    crossNamespaceVolumeDataSource: false,
    preventVolumeModeConversion: true,
    ...overrides,
  };
}
