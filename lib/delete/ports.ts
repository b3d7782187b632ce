/**
 * What deletion needs from the world, declared here where it is used and
 * kept narrow. main.ts passes the real implementations (the informers,
 * lib/kube/api.ts, lib/csi/controller_service.ts); unit tests pass small
 * fakes.
 */
import type { DeleteVolumeRequest } from "../csi/types.ts";
import type { PersistentVolume, SecretReference, StorageClass } from "../model/objects.ts";
import type { EventRecord } from "../model/events.ts";
import type { BoundObserver } from "../queue/bounded.ts";

/** This node's PVs (the informer's cache), by name. */
export interface VolumeLookup {
  get(name: string): PersistentVolume | undefined;
}

/** StorageClasses (the informer's cache), by name. */
export interface ClassLookup {
  get(name: string): StorageClass | undefined;
}

/** Kubernetes calls of the delete path. */
export interface DeleteApi {
  /** Adds or removes the protection finalizer with a patch that is safe when many agents patch at once. */
  patchFinalizer(
    pvName: string,
    change: "add" | "remove",
    signal?: AbortSignal,
  ): Promise<"patched" | "gone">;
  deletePersistentVolume(pvName: string, signal?: AbortSignal): Promise<"deleted" | "gone">;
  /** The PV as the API server has it now (not the cache); undefined when it does not exist. */
  readPersistentVolume(pvName: string, signal?: AbortSignal): Promise<PersistentVolume | undefined>;
  readSecretData(ref: SecretReference, signal?: AbortSignal): Promise<Record<string, string>>;
}

/** The one CSI call. */
export interface DeleteCsi {
  deleteVolume(request: DeleteVolumeRequest, signal?: AbortSignal): Promise<void>;
}

/** VolumeAttachments by PV name (only watched when the driver has PUBLISH_UNPUBLISH_VOLUME). */
export interface AttachmentLookup {
  /** The node a VolumeAttachment for this PV names, if one exists. */
  attachedNode(pvName: string): string | undefined;
}

/** controller_persistentvolume_delete_* (counted only for PVs this node handled), plus refusals. */
export interface DeleteMetrics {
  deleted(storageClass: string, seconds: number): void;
  failed(storageClass: string): void;
  refused(reason: "no-node-affinity"): void;
  /** Reports the size of the set of refused PVs (csi_node_provisioner_bounded_*). */
  refusedSet?: BoundObserver;
}

/** An informer as the wiring watches it: the key of each change. */
export interface Watched<T> {
  onChange(
    handler: (change: { key: string; old: T | undefined; new: T | undefined }) => void,
  ): void;
}

/** The VolumeAttachment cache: its informer, and the lookup by PV name. */
export interface AttachmentWatch extends AttachmentLookup {
  informer: Watched<{ persistentVolumeName: string | undefined }> & {
    run(signal: AbortSignal): Promise<void>;
    /** True once it listed: no delete worker runs before (the attach guard needs the whole list). */
    hasSynced(): boolean;
  };
}

/** Records Events (written in the background, never holding up the caller). */
export interface EventRecorder {
  record(event: EventRecord): void;
}
