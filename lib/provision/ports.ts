/**
 * What provisioning needs from the world, declared here where it is used and
 * kept narrow. main.ts passes the real implementations (the informers,
 * lib/kube/api.ts, lib/csi/controller_service.ts); unit tests pass small
 * fakes.
 */
import type {
  CreateVolumeRequest,
  CreateVolumeResponse,
  DeleteVolumeRequest,
} from "../csi/types.ts";
import type {
  Claim,
  PersistentVolume,
  SecretReference,
  StorageClass,
  VolumeAttributesClass,
} from "../model/objects.ts";
import type { EventRecord } from "../model/events.ts";
import type { BoundObserver } from "../queue/bounded.ts";

/** A read-only cache (an informer store). */
export interface Lookup<T> {
  get(key: string): T | undefined;
}

/** An informer as the wiring watches it: the key of each change, and every object it holds. */
export interface WatchedLookup<T> extends Lookup<T> {
  onChange(handler: (change: { key: string }) => void): void;
  list(): T[];
}

/** The caches the controller reads. Keys: "namespace/name" for claims, name for the rest. */
export interface ProvisionCaches {
  claims: Lookup<Claim>;
  classes: Lookup<StorageClass>;
  volumes: Lookup<PersistentVolume>;
}

/** Kubernetes calls beyond the caches. */
export interface ProvisionApi {
  createPersistentVolume(pv: PersistentVolume, signal?: AbortSignal): Promise<"created" | "exists">;
  readClaim(
    key: { namespace: string; name: string },
    signal?: AbortSignal,
  ): Promise<Claim | undefined>;
  removeSelectedNode(claim: Claim, signal?: AbortSignal): Promise<"removed" | "conflict" | "gone">;
  readSecretData(ref: SecretReference, signal?: AbortSignal): Promise<Record<string, string>>;
  readVolumeAttributesClass(
    name: string,
    signal?: AbortSignal,
  ): Promise<VolumeAttributesClass | undefined>;
}

/** Discovery, for the start-up check of the VolumeAttributesClass API. */
export interface Discovery {
  /** Whether the API server serves a resource in a group version. */
  servesResource(groupVersion: string, resource: string): Promise<boolean>;
}

/** The two CSI calls provisioning makes. */
export interface ProvisionCsi {
  createVolume(request: CreateVolumeRequest, signal?: AbortSignal): Promise<CreateVolumeResponse>;
  deleteVolume(request: DeleteVolumeRequest, signal?: AbortSignal): Promise<void>;
}

/** Labels of the controller_persistentvolumeclaim_provision_* metrics. */
export interface ProvisionLabels {
  class: string;
  /** Kind of the claim's data source, "" without one. */
  source: string;
}

/** controller_persistentvolumeclaim_provision_{total,failed_total,duration_seconds}. */
export interface ProvisionMetrics {
  succeeded(labels: ProvisionLabels, seconds: number): void;
  failed(labels: ProvisionLabels): void;
  /** Reports the size of the infeasible slow set (csi_node_provisioner_bounded_*). */
  slowSet?: BoundObserver;
}

/** Records Events (written in the background, never holding up the caller). */
export interface EventRecorder {
  record(event: EventRecord): void;
}
