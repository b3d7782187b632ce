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
  VolumeSnapshot,
  VolumeSnapshotContent,
} from "../model/objects.ts";
import type { EventRecord } from "../model/events.ts";
import type { BoundObserver } from "../queue/bounded.ts";
import type { Intent, IntentOutcome } from "./intent/intent.ts";

/** A read-only cache (an informer store). */
export interface Lookup<T> {
  get(key: string): T | undefined;
}

/** An informer as the wiring watches it: each change (key and new object), and every object it holds. */
export interface WatchedLookup<T> extends Lookup<T> {
  onChange(handler: (change: { key: string; new: T | undefined }) => void): void;
  list(): T[];
}

/** A cache that can also be walked. */
export interface ListedLookup<T> extends Lookup<T> {
  list(): T[];
}

/** The caches the controller reads. Keys: "namespace/name" for claims, name for the rest. */
export interface ProvisionCaches {
  claims: Lookup<Claim>;
  classes: Lookup<StorageClass>;
  /** This node's PVs (and those without node affinity). */
  volumes: ListedLookup<PersistentVolume>;
}

/**
 * What the API server answered to a PV's creation. A transient failure
 * (no answer, 401, 403, 408, 429, 5xx) is thrown instead, for a retry.
 */
export type PvCreateOutcome =
  | { kind: "created" }
  /** 409: a PV of that name exists; `existing` is it as read right after (undefined: gone again). */
  | { kind: "exists"; existing: PersistentVolume | undefined }
  /** Any other 4xx: this PV will never be accepted as it is. */
  | { kind: "rejected"; status: number; reason: string; message: string; fields: string[] };

/** Kubernetes calls beyond the caches. */
export interface ProvisionApi {
  createPersistentVolume(pv: PersistentVolume, signal?: AbortSignal): Promise<PvCreateOutcome>;
  /** Reads a PV from the API server (not the cache); undefined when it does not exist. */
  readPersistentVolume(name: string, signal?: AbortSignal): Promise<PersistentVolume | undefined>;
  readClaim(
    key: { namespace: string; name: string },
    signal?: AbortSignal,
  ): Promise<Claim | undefined>;
  removeSelectedNode(claim: Claim, signal?: AbortSignal): Promise<"removed" | "conflict" | "gone">;
  readSecretData(ref: SecretReference, signal?: AbortSignal): Promise<Record<string, string>>;
  /** As readSecretData; undefined when the Secret (or its namespace) does not exist. */
  findSecretData(
    ref: SecretReference,
    signal?: AbortSignal,
  ): Promise<Record<string, string> | undefined>;
  readVolumeAttributesClass(
    name: string,
    signal?: AbortSignal,
  ): Promise<VolumeAttributesClass | undefined>;
}

/** What a finalizer write on a VolumeSnapshot did. */
export type SnapshotFinalizerWrite = "changed" | "unchanged" | "gone" | "forbidden" | "conflict";

/**
 * Reads of a claim's snapshot or clone source beyond the caches, and the
 * protection finalizers. Reads return undefined for an object that does
 * not exist and throw (with the API's message) when they cannot tell.
 */
export interface DataSourceApi {
  /** Whether VolumeSnapshots are served (asked again while they are not). */
  snapshotsServed(): Promise<boolean>;
  readVolumeSnapshot(
    ref: { namespace: string; name: string },
    signal?: AbortSignal,
  ): Promise<VolumeSnapshot | undefined>;
  readVolumeSnapshotContent(
    name: string,
    signal?: AbortSignal,
  ): Promise<VolumeSnapshotContent | undefined>;
  readPersistentVolume(name: string, signal?: AbortSignal): Promise<PersistentVolume | undefined>;
  changeClaimFinalizer(
    ref: { namespace: string; name: string },
    change: { finalizer: string; action: "add" | "remove" },
    signal?: AbortSignal,
  ): Promise<"patched" | "gone">;
  /** `current`: the snapshot as read a moment ago, which saves a read. */
  changeSnapshotFinalizer(
    ref: { namespace: string; name: string },
    change: { finalizer: string; action: "add" | "remove"; current?: VolumeSnapshot },
    signal?: AbortSignal,
  ): Promise<SnapshotFinalizerWrite>;
}

export type { StartupCall } from "../kube/rest/startup_retry.ts";

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
  /** The memo of claims whose data source is on another node. */
  sourceMisses?: BoundObserver;
}

/** Records Events (written in the background, never holding up the caller). */
export interface EventRecorder {
  record(event: EventRecord): void;
}

/**
 * The intent journal: each CreateVolume is recorded durably before it is
 * sent, and cleared once its volume has a PV or is deleted (lib/journal
 * keeps it in a file on the node's disk).
 */
export interface Journal {
  /** Records (or replaces) the intent of its PV name; resolves once it is on disk. */
  record(intent: Intent): Promise<void>;
  /**
   * Clears the intent of a PV name, counting how it ended. Its removal may
   * reach the disk later: an intent left there after its end is settled again
   * harmlessly (its volume is found held by its PV, or deleted once more).
   */
  clear(pvName: string, outcome: IntentOutcome): void;
  /**
   * Marks an intent as being settled (its claim no longer needs it): it no
   * longer counts against the entry bound new intents are held to.
   */
  settling(pvName: string): void;
  /** Every intent not cleared yet. */
  entries(): Intent[];
  /** The intent of a PV name, undefined once cleared. */
  get(pvName: string): Intent | undefined;
  /**
   * The intents of one claim (its intentKey(), "namespace/name"): asked at
   * every sync of the claim, so found without a scan of the others.
   */
  entriesOf(claimKey: string): Intent[];
  /** How many intents are not cleared yet. */
  readonly size: number;
}
