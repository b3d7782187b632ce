/**
 * The PersistentVolume for a created volume: upstream's `Provision` (the CSI
 * part) plus sig-storage-lib's `provisionClaimOperation` (claimRef,
 * finalizer, provisioned-by, storageClassName), as one pure function.
 */
import type { CreateVolumeResponse, Segments } from "../../csi/types.ts";
import {
  ANN_PROVISIONED_BY,
  PROVISIONER_IDENTITY_KEY,
  PV_PROTECTION_FINALIZER,
} from "../../model/keys.ts";
import type {
  Claim,
  CsiVolumeSource,
  PersistentVolume,
  StorageClass,
} from "../../model/objects.ts";
import { formatBinarySI } from "../../model/quantity.ts";
import { isConfinedToNode, volumeNodeAffinity } from "../../topology/affinity.ts";
import { claimStorageClassName } from "../../model/claim_class.ts";
import { type Problem, problem } from "../outcome.ts";
import type { ProvisionPlan } from "../request/request.ts";
import { deletionSecretAnnotations, modifySecretAnnotations } from "../../secrets/annotations.ts";

/** What the PV is made of. */
interface PersistentVolumeInput {
  plan: ProvisionPlan;
  claim: Claim;
  storageClass: StorageClass;
  response: CreateVolumeResponse;
}

/** The flags and facts the PV depends on. */
export interface PersistentVolumeOptions {
  driverName: string;
  /** The provisioner identity stored in volumeAttributes (informational). */
  identity: string;
  /** --controller-publish-readonly. */
  controllerPublishReadonly: boolean;
  /** Whether topology is supported: only then the PV gets node affinity. */
  topologySupported: boolean;
  /**
   * This node, and the labels its agent selects its own PVs by (model/labels.ts
   * nodeLabels): a PV confined to this node gets them, so that other nodes'
   * agents are not sent its watch events.
   */
  node: { name: string; segment: Segments | null; labels: Record<string, string> };
}

/**
 * The driver created a smaller volume than asked for. The caller deletes it
 * (DeleteVolume, up to 5 tries, with the provisioner secrets), reports
 * `message` (extended by `orphanedVolumeMessage` when the cleanup failed) and
 * retries with state `inBackground`.
 */
export interface VolumeTooSmall {
  kind: "tooSmall";
  volumeId: string;
  capacityBytes: bigint;
  requiredBytes: bigint;
  message: string;
  state: "inBackground";
}

/**
 * The claim has a data source but the driver's answer names no content
 * source: the volume may be empty. As for a too-small volume, the caller
 * deletes it and retries in the background (upstream's `volume content
 * source missing`).
 */
export interface VolumeWithoutContent {
  kind: "noContentSource";
  volumeId: string;
  message: "volume content source missing";
  state: "inBackground";
}

/** The PV to create, a volume to clean up, or an unusable response. */
export type PersistentVolumeOutcome =
  | { kind: "persistentVolume"; volume: PersistentVolume; capacityBytes: bigint }
  | VolumeTooSmall
  | VolumeWithoutContent
  | Problem;

/** Builds the PV for a successful CreateVolume. */
export function buildPersistentVolume(
  input: PersistentVolumeInput,
  options: PersistentVolumeOptions,
): PersistentVolumeOutcome {
  const { plan, claim, storageClass } = input;
  const volume = input.response.volume;
  // Upstream dereferences these without checks; a driver that answers OK
  // without a volume or ID cannot be cleaned up, so retry CreateVolume,
  // which is idempotent by name.
  if (volume === null || volume === undefined || volume.volume_id === "") {
    return problem(`CreateVolume for ${plan.volumeName} returned no volume ID`, {
      state: "inBackground",
    });
  }
  const capacity = capacityOf(volume.capacity_bytes, plan.requiredBytes);
  if (capacity < plan.requiredBytes) {
    return {
      kind: "tooSmall",
      volumeId: volume.volume_id,
      capacityBytes: capacity,
      requiredBytes: plan.requiredBytes,
      message:
        `created volume capacity ${capacity} less than requested capacity ${plan.requiredBytes}`,
      state: "inBackground",
    };
  }
  // Upstream checks spec.dataSource (and a cross-namespace dataSourceRef,
  // which this agent refuses before CreateVolume).
  if ((claim.spec.dataSource ?? undefined) !== undefined && !volume.content_source) {
    return {
      kind: "noContentSource",
      volumeId: volume.volume_id,
      message: "volume content source missing",
      state: "inBackground",
    };
  }
  const affinity = options.topologySupported
    ? volumeNodeAffinity(volume.accessible_topology)
    : undefined;
  const mountOptions = storageClass.mountOptions ?? [];
  const pv: PersistentVolume = {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: {
      ...metadataOf(plan, storageClass),
      ...(isConfinedToNode(affinity, options.node) ? { labels: { ...options.node.labels } } : {}),
    },
    spec: {
      accessModes: [...(claim.spec.accessModes ?? [])],
      capacity: { storage: formatBinarySI(capacity) },
      csi: csiSource(input, options),
      claimRef: claimRef(claim),
      storageClassName: claimStorageClassName(claim),
      ...(storageClass.reclaimPolicy
        ? { persistentVolumeReclaimPolicy: storageClass.reclaimPolicy }
        : {}),
      ...(mountOptions.length > 0 ? { mountOptions: [...mountOptions] } : {}),
      ...(claim.spec.volumeMode ? { volumeMode: claim.spec.volumeMode } : {}),
      ...(affinity === undefined ? {} : { nodeAffinity: affinity }),
      ...(plan.volumeAttributesClassName
        ? { volumeAttributesClassName: plan.volumeAttributesClassName }
        : {}),
    },
  };
  return { kind: "persistentVolume", volume: pv, capacityBytes: capacity };
}

function metadataOf(plan: ProvisionPlan, storageClass: StorageClass): PersistentVolume["metadata"] {
  return {
    name: plan.volumeName,
    annotations: {
      [ANN_PROVISIONED_BY]: storageClass.provisioner,
      ...deletionSecretAnnotations(plan.provisionerSecret),
      ...modifySecretAnnotations(plan.pvSecrets.controllerModify),
    },
    finalizers: [PV_PROTECTION_FINALIZER],
  };
}

/** The size to record: the driver's, or the request when the driver says 0 ("unknown" in CSI). */
function capacityOf(capacityBytes: string, requiredBytes: bigint): bigint {
  const reported = /^-?\d+$/.test(capacityBytes) ? BigInt(capacityBytes) : 0n;
  return reported === 0n ? requiredBytes : reported;
}

function csiSource(
  input: PersistentVolumeInput,
  options: PersistentVolumeOptions,
): CsiVolumeSource {
  const { plan, claim } = input;
  const volume = input.response.volume;
  const capabilities = plan.request.volume_capabilities;
  const readOnly = options.controllerPublishReadonly && capabilities.length === 1 &&
    capabilities[0]?.access_mode?.mode === "MULTI_NODE_READER_ONLY";
  const secrets = plan.pvSecrets;
  const refs = {
    controllerPublishSecretRef: secrets.controllerPublish,
    nodeStageSecretRef: secrets.nodeStage,
    nodePublishSecretRef: secrets.nodePublish,
    controllerExpandSecretRef: secrets.controllerExpand,
    nodeExpandSecretRef: secrets.nodeExpand,
  };
  const source: CsiVolumeSource = {
    driver: options.driverName,
    volumeHandle: volume?.volume_id ?? "",
    // The driver's volume_context wins over our identity key on collision.
    volumeAttributes: { [PROVISIONER_IDENTITY_KEY]: options.identity, ...volume?.volume_context },
  };
  if (readOnly) source.readOnly = true;
  if (claim.spec.volumeMode !== "Block" && plan.fsType !== "") source.fsType = plan.fsType;
  for (const [field, ref] of Object.entries(refs)) {
    if (ref !== null) source[field as keyof typeof refs] = { ...ref };
  }
  return source;
}

/** `ref.GetReference(claim)`: what the PV controller binds by. */
function claimRef(claim: Claim): NonNullable<PersistentVolume["spec"]["claimRef"]> {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    namespace: claim.metadata.namespace,
    name: claim.metadata.name,
    uid: claim.metadata.uid,
    resourceVersion: claim.metadata.resourceVersion,
  };
}

/**
 * The message when the cleanup DeleteVolume failed too (upstream's wording,
 * which says "Cleanup" after a too-small volume and "cleanup" after a
 * missing content source).
 */
export function orphanedVolumeMessage(
  message: string,
  cleanup: { volumeName: string; error: string },
): string {
  const word = message === "volume content source missing" ? "cleanup" : "Cleanup";
  return `${message}. ${word} of volume ${cleanup.volumeName} failed, volume is orphaned: ${cleanup.error}`;
}
