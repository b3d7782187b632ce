/**
 * The three informers provisioning reads: claims (only the unbound ones of
 * this node or of no node yet), StorageClasses, and this node's PVs.
 */
import type { Logger } from "../log/logger.ts";
import { Informer } from "./informer.ts";
import type { Claim, PersistentVolume, StorageClass } from "./objects.ts";
import type { KubeRest } from "./rest.ts";
import { trimClaim, trimPersistentVolume, trimStorageClass } from "./trim.ts";

/** The caches, by what they hold. */
export interface ProvisioningCaches {
  claims: Informer<Claim>;
  classes: Informer<StorageClass>;
  volumes: Informer<PersistentVolume>;
}

/** Creates (does not start) the informers. */
export function createProvisioningCaches(
  rest: KubeRest,
  options: { nodeName: string; keepVolume: (pv: PersistentVolume) => boolean; logger: Logger },
): ProvisioningCaches {
  const { nodeName, keepVolume, logger } = options;
  return {
    claims: new Informer(rest, {
      resource: "persistentvolumeclaims",
      path: "/api/v1/persistentvolumeclaims",
      trim: (raw) => trimClaim(raw, { nodeName }),
      resourceVersionOf: (claim) => claim.metadata.resourceVersion,
      logger,
    }),
    classes: new Informer(rest, {
      resource: "storageclasses",
      path: "/apis/storage.k8s.io/v1/storageclasses",
      trim: trimStorageClass,
      resourceVersionOf: (storageClass) => storageClass.metadata.resourceVersion,
      logger,
    }),
    volumes: new Informer(rest, {
      resource: "persistentvolumes",
      path: "/api/v1/persistentvolumes",
      trim: (raw) => trimPersistentVolume(raw, { keep: keepVolume }),
      resourceVersionOf: (pv) => pv.metadata.resourceVersion ?? "",
      logger,
    }),
  };
}
