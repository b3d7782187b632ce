/**
 * What volume expansion needs from the world, declared where it is used and
 * kept narrow. main.ts passes the real implementations (the informers,
 * lib/kube/resize_api.ts, lib/csi/controller_service.ts); unit tests pass
 * small fakes.
 */
import type {
  ControllerExpandVolumeRequest,
  ControllerExpandVolumeResponse,
} from "../csi/types.ts";
import type { EventRecord } from "../model/events.ts";
import type { Claim, PersistentVolume, SecretReference, StorageClass } from "../model/objects.ts";

/** A cache by key. */
export interface Lookup<T> {
  get(key: string): T | undefined;
}

/** Kubernetes writes and reads of the resizer. */
export interface ResizeApi {
  /**
   * A merge patch of the claim's status subresource; `patch` carries the
   * resourceVersion precondition when it should. Returns the claim written.
   */
  patchClaimStatus(
    claim: Claim,
    patch: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<Claim>;
  /** Sets the PV's spec.capacity.storage. */
  patchVolumeCapacity(pvName: string, capacity: string, signal?: AbortSignal): Promise<void>;
  readSecretData(ref: SecretReference, signal?: AbortSignal): Promise<Record<string, string>>;
}

/** The one CSI call. */
export interface ResizeCsi {
  controllerExpandVolume(
    request: ControllerExpandVolumeRequest,
    signal: AbortSignal,
  ): Promise<ControllerExpandVolumeResponse>;
}

/** Records Events (written in the background). */
export interface EventRecorder {
  record(event: EventRecord): void;
}

/** What the controller reads and writes through. */
export interface ResizePorts {
  claims: Lookup<Claim>;
  volumes: Lookup<PersistentVolume>;
  classes: Lookup<StorageClass>;
  api: ResizeApi;
  csi: ResizeCsi;
  events: EventRecorder;
  /** The free bytes this node published for a class, when it publishes capacity. */
  publishedFree?: (className: string) => bigint | undefined;
}
