/**
 * Trim functions for the informer caches: they decide which objects this
 * node's agent keeps at all, and copy only the fields it reads. Objects of
 * other nodes are not kept, so the cache grows with this node's volumes, not
 * with the cluster.
 */
import { ANN_SELECTED_NODE, CLONE_PROTECTION_FINALIZER } from "../model/keys.ts";
import type { RawObject } from "./informer/informer.ts";
import type { Claim, Metadata, PersistentVolume, StorageClass } from "../model/objects.ts";

type Raw = RawObject;

/** An annotation that only costs memory: kubectl apply keeps a full copy of the object in it. */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

function metadata(raw: Raw): Metadata {
  const source = raw.metadata as Metadata & { managedFields?: unknown };
  const kept: Metadata = {
    name: source.name,
    uid: source.uid,
    resourceVersion: source.resourceVersion,
  };
  if (source.namespace !== undefined) kept.namespace = source.namespace;
  if (source.annotations !== undefined) kept.annotations = withoutLastApplied(source.annotations);
  if (source.labels !== undefined) kept.labels = source.labels;
  if (source.finalizers !== undefined) kept.finalizers = source.finalizers;
  if (source.deletionTimestamp !== undefined) kept.deletionTimestamp = source.deletionTimestamp;
  return kept;
}

/**
 * The parsed annotations themselves unless kubectl's copy is among them:
 * nothing else uses the parsed event, so copying every object's annotations
 * would be work for nothing.
 */
function withoutLastApplied(annotations: Record<string, string>): Record<string, string> {
  if (!Object.hasOwn(annotations, LAST_APPLIED)) return annotations;
  const { [LAST_APPLIED]: _dropped, ...kept } = annotations;
  return kept;
}

function pick<T extends object>(source: T | undefined, keys: (keyof T)[]): Partial<T> {
  const result: Partial<T> = {};
  if (source === undefined) return result;
  for (const key of keys) if (source[key] !== undefined) result[key] = source[key];
  return result;
}

/**
 * Keeps a claim while it is unbound and selected to this node or to no node
 * yet (it may become ours), and, whatever its node, the claims the
 * protection controllers (lib/clone) read: a source claim with the
 * cloning-protection finalizer, and a Pending claim that clones a claim or
 * restores a snapshot. Other claims are not kept: a change that makes one
 * ours arrives as a watch event.
 */
export function trimClaim(
  raw: Raw,
  options: { nodeName: string; keepAll?: boolean },
): Claim | undefined {
  const annotations = (raw.metadata as Metadata).annotations ?? {};
  const selected = annotations[ANN_SELECTED_NODE];
  const spec = (raw["spec"] ?? {}) as Claim["spec"];
  const status = raw["status"] as Claim["status"] | undefined;
  if (!options.keepAll) {
    const elsewhere = selected !== undefined && selected !== "" && selected !== options.nodeName;
    const bound = (spec.volumeName ?? "") !== "";
    if ((elsewhere || bound) && !isProtectionConcern(raw, { spec, status })) return undefined;
  }
  return {
    metadata: metadata(raw) as Claim["metadata"],
    spec: pick(spec, [
      "accessModes",
      "resources",
      "storageClassName",
      "volumeMode",
      "volumeName",
      "selector",
      "dataSource",
      "dataSourceRef",
      "volumeAttributesClassName",
    ]),
    ...(status?.phase === undefined ? {} : { status: { phase: status.phase } }),
  };
}

/** A source claim being protected, or a Pending clone or restore. */
function isProtectionConcern(
  raw: Raw,
  claim: { spec: Claim["spec"]; status: Claim["status"] | undefined },
): boolean {
  if ((raw.metadata as Metadata).finalizers?.includes(CLONE_PROTECTION_FINALIZER)) return true;
  const phase = claim.status?.phase ?? "";
  if (phase !== "Pending" && phase !== "") return false;
  return clonesOrRestores(claim.spec.dataSource) || clonesOrRestores(claim.spec.dataSourceRef);
}

function clonesOrRestores(ref: Claim["spec"]["dataSource"]): boolean {
  return ref?.kind === "PersistentVolumeClaim" || ref?.kind === "VolumeSnapshot";
}

/** Keeps every StorageClass (there are few), trimmed. */
export function trimStorageClass(raw: Raw): StorageClass {
  const source = raw as unknown as StorageClass;
  return {
    metadata: metadata(raw),
    provisioner: source.provisioner,
    ...pick(source, [
      "parameters",
      "reclaimPolicy",
      "mountOptions",
      "volumeBindingMode",
      "allowedTopologies",
      "allowVolumeExpansion",
    ]),
  };
}

/**
 * Keeps the PVs a filter accepts (the driver's PVs on this node, decided by
 * the caller), trimmed to what provisioning and deletion read.
 */
export function trimPersistentVolume(
  raw: Raw,
  options: { keep: (pv: PersistentVolume) => boolean },
): PersistentVolume | undefined {
  const source = raw as unknown as PersistentVolume;
  const pv: PersistentVolume = {
    metadata: metadata(raw),
    spec: pick(source.spec, [
      "accessModes",
      "capacity",
      "csi",
      "claimRef",
      "persistentVolumeReclaimPolicy",
      "storageClassName",
      "nodeAffinity",
      "volumeMode",
      "mountOptions",
    ]),
    ...(source.status?.phase === undefined ? {} : { status: { phase: source.status.phase } }),
  };
  return options.keep(pv) ? pv : undefined;
}

/** A VolumeAttachment, cut to what the delete path's attach guard reads. */
export interface Attachment {
  name: string;
  resourceVersion: string;
  persistentVolumeName: string | undefined;
  nodeName: string;
}

/** Keeps the VolumeAttachments of one driver. */
export function trimVolumeAttachment(
  raw: Raw,
  options: { driverName: string },
): Attachment | undefined {
  const spec = (raw["spec"] ?? {}) as {
    attacher?: string;
    nodeName?: string;
    source?: { persistentVolumeName?: string };
  };
  if (spec.attacher !== options.driverName) return undefined;
  return {
    name: raw.metadata.name,
    resourceVersion: raw.metadata.resourceVersion ?? "",
    persistentVolumeName: spec.source?.persistentVolumeName,
    nodeName: spec.nodeName ?? "",
  };
}
