/**
 * The three informers provisioning reads: claims (only the unbound ones of
 * this node or of no node yet, of the driver's classes: claim_scope.ts),
 * StorageClasses, and this node's PVs.
 */
import type { Logger } from "../log/logger.ts";
import { Informer } from "./informer/informer.ts";
import { InformerUnion } from "./informer/union.ts";
import type { Claim, PersistentVolume, StorageClass } from "../model/objects.ts";
import { DRIVER_NAME_LABEL } from "../model/keys.ts";
import { labelSelector, UNLABELLED_SELECTOR } from "../model/labels.ts";
import type { PublishedCapacity, StorageCapacity } from "../model/storage_capacity.ts";
import type { KubeRest } from "./rest/client.ts";
import {
  storageCapacityPath,
  trimPublishedCapacity,
  trimStorageCapacity,
} from "./storage_capacity.ts";
import type { BoundObserver } from "../queue/bounded.ts";
import { ClaimScope, type TemplateKeys } from "./claim_scope.ts";
import {
  type Attachment,
  trimClaim,
  trimPersistentVolume,
  trimStorageClass,
  trimVolumeAttachment,
} from "./trim.ts";

/** The caches, by what they hold. */
export interface ProvisioningCaches {
  claims: Informer<Claim>;
  classes: Informer<StorageClass>;
  volumes: InformerUnion<PersistentVolume>;
}

/** Creates (does not start) the informers. */
export function createProvisioningCaches(
  rest: KubeRest,
  options: {
    nodeName: string;
    driverName: string;
    /** The claim annotations a class's secret templates read. */
    templateKeys: TemplateKeys;
    keepVolume: (pv: PersistentVolume) => boolean;
    /** The labels of the PVs this node's agent provisions (model/labels.ts nodeLabels). */
    volumeLabels: Record<string, string>;
    logger: Logger;
    idleTimeoutMs?: number;
    /** Observer of the claims of unknown classes kept. */
    unknownClassClaims?: BoundObserver;
  },
): ProvisioningCaches {
  const { nodeName, keepVolume, logger } = options;
  const idle = idleOption(options);
  const volumes = (selector: string) =>
    new Informer(rest, {
      resource: "persistentvolumes",
      path: "/api/v1/persistentvolumes",
      labelSelector: selector,
      trim: (raw) => trimPersistentVolume(raw, { keep: keepVolume }),
      resourceVersionOf: (pv) => pv.metadata.resourceVersion ?? "",
      logger,
      cutManagedFields: true,
      ...idle,
    });
  const classes = new Informer(rest, {
    resource: "storageclasses",
    path: "/apis/storage.k8s.io/v1/storageclasses",
    trim: trimStorageClass,
    resourceVersionOf: (storageClass: StorageClass) => storageClass.metadata.resourceVersion,
    logger,
    cutManagedFields: true,
    ...idle,
  });
  const scope = new ClaimScope({
    driverName: options.driverName,
    templateKeys: options.templateKeys,
    classes,
    ...(options.unknownClassClaims ? { observer: options.unknownClassClaims } : {}),
  });
  const claims = new Informer(rest, {
    resource: "persistentvolumeclaims",
    path: "/api/v1/persistentvolumeclaims",
    trim: (raw) => trimClaim(raw, { nodeName, scope }),
    resourceVersionOf: (claim) => claim.metadata.resourceVersion,
    relisted: (keys) => scope.retain(keys),
    // What the claim trim keeps depends on the classes.
    after: classes,
    logger,
    cutManagedFields: true,
    ...idle,
  });
  claims.onChange((change) => {
    if (change.new === undefined) scope.forget(change.key);
  });
  classes.onChange((change) => {
    if (scope.classChanged(change)) claims.relist();
  });
  return {
    claims,
    classes,
    // This node's PVs carry its labels; PVs provisioned before (by upstream's
    // sidecar, by an earlier version, of a zone) carry none. Another node's
    // labelled PVs are never its concern: their events are not even sent here.
    volumes: new InformerUnion("persistentvolumes", [
      volumes(labelSelector(options.volumeLabels)),
      volumes(UNLABELLED_SELECTOR),
    ]),
  };
}

/** VolumeAttachments of the driver, indexed by PV name (the delete path's attach guard). */
export interface AttachmentCache {
  informer: Informer<Attachment>;
  attachedNode(pvName: string): string | undefined;
}

/** Creates (does not start) the VolumeAttachment informer and its PV index. */
export function createAttachmentCache(
  rest: KubeRest,
  options: { driverName: string; logger: Logger; idleTimeoutMs?: number },
): AttachmentCache {
  const informer = new Informer(rest, {
    resource: "volumeattachments",
    path: "/apis/storage.k8s.io/v1/volumeattachments",
    trim: (raw) => trimVolumeAttachment(raw, { driverName: options.driverName }),
    resourceVersionOf: (attachment) => attachment.resourceVersion,
    logger: options.logger,
    cutManagedFields: true,
    ...idleOption(options),
  });
  const byVolume = new Map<string, Map<string, string>>();
  informer.onChange((change) => {
    const before = change.old?.persistentVolumeName;
    if (before !== undefined) byVolume.get(before)?.delete(change.key);
    if (before !== undefined && byVolume.get(before)?.size === 0) byVolume.delete(before);
    const after = change.new?.persistentVolumeName;
    if (after !== undefined && change.new !== undefined) {
      const attachments = byVolume.get(after) ?? new Map<string, string>();
      attachments.set(change.key, change.new.nodeName);
      byVolume.set(after, attachments);
    }
  });
  return {
    informer,
    attachedNode: (pvName) => byVolume.get(pvName)?.values().next().value,
  };
}

/** Creates (does not start) the informer of this node's CSIStorageCapacity objects. */
export function createCapacityCache(
  rest: KubeRest,
  options: { namespace: string; labelSelector: string; logger: Logger; idleTimeoutMs?: number },
): Informer<StorageCapacity> {
  return new Informer<StorageCapacity>(rest, {
    resource: "csistoragecapacities",
    path: storageCapacityPath(options.namespace),
    labelSelector: options.labelSelector,
    trim: trimStorageCapacity,
    resourceVersionOf: (object) => object.metadata.resourceVersion,
    logger: options.logger,
    cutManagedFields: true,
    ...idleOption(options),
  });
}

/** Every node's CSIStorageCapacity objects of one driver, by class. */
export interface PublishedCapacityCache {
  informer: Informer<PublishedCapacity>;
  /** The objects of a class, of every node that publishes it. */
  forClass(storageClassName: string): PublishedCapacity[];
}

/**
 * Creates (does not start) the informer of every node's CSIStorageCapacity
 * objects of the driver in the agents' namespace (label
 * csi.storage.k8s.io/drivername), trimmed to PublishedCapacity and indexed
 * by class. Namespace-wide: the agents of a DaemonSet publish into their
 * own namespace, where they may already list and watch these objects.
 */
export function createPublishedCapacityCache(
  rest: KubeRest,
  options: { namespace: string; driverName: string; logger: Logger; idleTimeoutMs?: number },
): PublishedCapacityCache {
  const informer = new Informer<PublishedCapacity>(rest, {
    resource: "csistoragecapacities",
    path: storageCapacityPath(options.namespace),
    labelSelector: `${DRIVER_NAME_LABEL}=${options.driverName}`,
    trim: trimPublishedCapacity,
    resourceVersionOf: (object) => object.resourceVersion,
    logger: options.logger,
    cutManagedFields: true,
    ...idleOption(options),
  });
  const byClass = new Map<string, Map<string, PublishedCapacity>>();
  informer.onChange((change) => {
    const before = change.old?.storageClassName;
    if (before !== undefined) byClass.get(before)?.delete(change.key);
    if (before !== undefined && byClass.get(before)?.size === 0) byClass.delete(before);
    if (change.new !== undefined) {
      const objects = byClass.get(change.new.storageClassName) ?? new Map();
      objects.set(change.key, change.new);
      byClass.set(change.new.storageClassName, objects);
    }
  });
  return {
    informer,
    forClass: (name) => [...(byClass.get(name)?.values() ?? [])],
  };
}

function idleOption(options: { idleTimeoutMs?: number }): { idleTimeoutMs?: number } {
  return options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs };
}
