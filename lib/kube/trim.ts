/**
 * Trim functions for the informer caches: they decide which objects this
 * node's agent keeps at all, and copy only the fields it reads. Objects of
 * other nodes are not kept, so the cache grows with this node's volumes, not
 * with the cluster.
 */
import { claimStorageClassName } from "../model/claim_class.ts";
import { ANN_SELECTED_NODE, CLONE_PROTECTION_FINALIZER } from "../model/keys.ts";
import {
  type Claim,
  type Metadata,
  objectKey,
  type PersistentVolume,
  type StorageClass,
} from "../model/objects.ts";
import type { RawObject } from "./informer/informer.ts";

type Raw = RawObject;

/** An annotation that only costs memory: kubectl apply keeps a full copy of the object in it. */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * The metadata kept. With `annotationKeys` (a claim's), only those
 * annotations and no labels: a tenant's claim may carry any amount of both.
 */
function metadata(raw: Raw, annotationKeys?: ReadonlySet<string>): Metadata {
  const source = raw.metadata as Metadata & { managedFields?: unknown };
  const kept: Metadata = {
    name: source.name,
    uid: source.uid,
    resourceVersion: source.resourceVersion,
  };
  if (source.namespace !== undefined) kept.namespace = source.namespace;
  const annotations = source.annotations === undefined
    ? undefined
    : annotationKeys === undefined
    ? withoutLastApplied(source.annotations)
    : only(source.annotations, annotationKeys);
  if (annotations !== undefined) kept.annotations = annotations;
  if (source.labels !== undefined && annotationKeys === undefined) kept.labels = source.labels;
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

/** What the claim informer keeps of claims beyond node and binding (claim_scope.ts). */
export interface ClaimKeep {
  /** Whether to keep an unbound claim of this node or of no node yet, by its key and class. */
  keeps(key: string, className: string): boolean;
  /** The only annotation keys kept; labels are not kept at all. */
  annotationKeys: ReadonlySet<string>;
}

/**
 * Keeps a claim while it is unbound and selected to this node or to no node
 * yet (it may become ours) and `scope` keeps it, and, whatever its node or
 * class, the claims the protection controllers (lib/clone) read: a source
 * claim with the cloning-protection finalizer, and a Pending claim that
 * clones a claim or restores a snapshot. Other claims are not kept: a change
 * that makes one ours arrives as a watch event, or a relist. With a scope,
 * only its annotation keys are kept; `keepAll` keeps every claim whole
 * (but kubectl's copy), for a claim read on its own.
 */
export function trimClaim(
  raw: Raw,
  options: { nodeName: string; keepAll?: boolean; scope?: ClaimKeep },
): Claim | undefined {
  const annotations = (raw.metadata as Metadata).annotations ?? {};
  const selected = annotations[ANN_SELECTED_NODE];
  const spec = (raw["spec"] ?? {}) as Claim["spec"];
  const status = raw["status"] as Claim["status"] | undefined;
  if (!options.keepAll && !isProtectionConcern(raw, { spec, status })) {
    const elsewhere = selected !== undefined && selected !== "" && selected !== options.nodeName;
    const bound = (spec.volumeName ?? "") !== "";
    if (elsewhere || bound) return undefined;
    const className = claimStorageClassName({ metadata: { annotations }, spec } as Claim);
    if (options.scope && !options.scope.keeps(objectKey(raw.metadata), className)) return undefined;
  }
  const keys = options.keepAll ? undefined : options.scope?.annotationKeys;
  return {
    metadata: metadata(raw, keys) as Claim["metadata"],
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

/** Only the annotations of `keys`; undefined when none of them is there. */
function only(
  annotations: Record<string, string>,
  keys: ReadonlySet<string>,
): Record<string, string> | undefined {
  let kept: Record<string, string> | undefined;
  for (const key of keys) {
    const value = annotations[key];
    if (value !== undefined && Object.hasOwn(annotations, key)) (kept ??= {})[key] = value;
  }
  return kept;
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
