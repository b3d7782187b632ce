/**
 * What the capacity publisher needs from the world, declared here where it
 * is used and kept narrow. main.ts passes the real implementations (the
 * informers, lib/kube/api.ts, the capacity client of
 * lib/kube/storage_capacity.ts, the CSI connection); unit tests pass small
 * fakes.
 */
import type { GetCapacityRequest, GetCapacityResponse } from "../csi/types.ts";
import type { CacheChange } from "../kube/informer/informer.ts";
import type { EventRecord } from "../model/events.ts";
import type { ObjectIdentity, ObjectRef, OwnerReference, StorageClass } from "../model/objects.ts";
import type { AgentSighting } from "../liveness/view.ts";
import type {
  NewStorageCapacity,
  PublishedCapacity,
  StorageCapacity,
  StorageCapacityChange,
} from "../model/storage_capacity.ts";

/** An informer as the publisher watches it. */
export interface WatchedCache<T> {
  onChange(handler: (change: CacheChange<T>) => void): void;
  hasSynced(): boolean;
}

/** The StorageClass cache (shared with provisioning). */
export interface ClassLookup {
  get(name: string): StorageClass | undefined;
  list(): StorageClass[];
}

/** The cache of this node's own objects (label-selected informer). */
export interface CapacityObjects {
  list(): StorageCapacity[];
}

/** The CSI call. */
export interface CapacityCsi {
  getCapacity(request: GetCapacityRequest, signal: AbortSignal): Promise<GetCapacityResponse>;
}

/**
 * The capacity client (--kube-api-capacity-qps/-burst): the writes, and the
 * client's budget, which the controller takes itself, one token per write,
 * before it reads the capacity it writes, so that a write delayed by the
 * budget carries the value of when it is sent. The writes then take no token.
 */
export interface CapacityClient {
  create(object: NewStorageCapacity, signal: AbortSignal): Promise<{ name: string }>;
  update(
    target: { name: string; resourceVersion: string; change: StorageCapacityChange },
    signal: AbortSignal,
  ): Promise<"updated" | "conflict" | "gone">;
  delete(target: { name: string; uid: string }, signal: AbortSignal): Promise<"deleted" | "gone">;
  budget: WriteBudget;
}

/** The write budget of the capacity client. */
export interface WriteBudget {
  /** Waits for one write; false when `signal` aborted first. */
  take(priority: "high", signal: AbortSignal): Promise<boolean>;
}

/** Who owns the objects. */
export interface CapacityOwner {
  /** The controller reference to set; undefined leaves owners alone. */
  current(): OwnerReference | undefined;
  /** Checked before each create: "gone" when the owner no longer exists (nothing is created). */
  confirm(signal: AbortSignal): Promise<"ok" | "gone">;
}

export type { StartupCall } from "../kube/rest/startup_retry.ts";

/** The reads of the start-up checks and of the owner lookup. */
export interface CapacityStartReads {
  /** Whether the API server serves a resource in a group version (discovery). */
  servesResource(groupVersion: string, resource: string): Promise<boolean>;
  /** A namespaced object's UID and owners; throws when it cannot be read. */
  readObject(ref: ObjectRef, signal?: AbortSignal): Promise<ObjectIdentity>;
  /** Undefined when the Node does not exist. */
  readNodeUid(name: string, signal?: AbortSignal): Promise<string | undefined>;
}

/** The agent's /readyz conditions. */
export interface Readiness {
  /** Adds a condition that is not met yet. */
  require(name: string, reason: string): void;
  /** true: met; a string: not met, and why. */
  set(name: string, state: true | string): void;
}

/** The reads the owner lookup makes. */
export type OwnerReads = Pick<CapacityStartReads, "readObject" | "readNodeUid">;

/** Records Events (written in the background, never holding up the caller). */
export interface EventRecorder {
  record(event: EventRecord): void;
}

/** Every node's objects of the driver in NAMESPACE (the withdrawal's informer, run by main.ts). */
export interface PublishedObjects {
  list(): PublishedCapacity[];
  hasSynced(): boolean;
}

/** The agents' liveness from their Leases (lib/liveness), seen in full only while watched. */
export interface AgentsLiveness {
  /** Starts or stops the watch of the Leases. */
  watch(on: boolean): void;
  agents(): AgentSighting[];
  hasSynced(): boolean;
  /** Of these agents, those known gone (from the watch, or else from the probes). */
  gone(publishers: readonly string[], nowMs: number): Set<string>;
  /** While not watching: reads these agents' Leases, at most once per renewal period. */
  probe(publishers: readonly string[], signal: AbortSignal): Promise<void>;
}
