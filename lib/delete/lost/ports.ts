/**
 * What the release of lost volumes needs from the world, kept narrow.
 * main.ts passes lib/kube (KubeApi, the Lease notes, the PV list), the
 * Lease watch of lib/liveness, the StorageClass informer and the Event
 * sender; unit tests pass small fakes.
 */
import type { AgentSighting } from "../../liveness/view.ts";
import type { EventRecord } from "../../model/events.ts";
import type { PersistentVolume, StorageClass } from "../../model/objects.ts";

/** The writes that release a lost volume. */
export interface LostVolumeWrites {
  patchFinalizer(
    pvName: string,
    action: "remove",
    signal?: AbortSignal,
  ): Promise<"patched" | "gone">;
  /** With `uid` as precondition: another PV of the same name is "gone". */
  deletePersistentVolume(
    pvName: string,
    signal?: AbortSignal,
    uid?: string,
  ): Promise<"deleted" | "gone">;
  /** With its UID as precondition; a refusal comes with the API server's message. */
  deleteClaim(
    ref: { namespace: string; name: string; uid: string },
    signal?: AbortSignal,
  ): Promise<"deleted" | "gone" | { forbidden: string }>;
}

/** The StorageClass cache. */
export interface ClassLookup {
  get(name: string): StorageClass | undefined;
}

/** Records Events (in the background). */
export interface EventRecorder {
  record(event: EventRecord): void;
}

/** The agents' liveness (lib/liveness LeaseWatch), in full only on a watcher. */
export interface LeaseView {
  agents(): AgentSighting[];
  hasSynced(): boolean;
  gone(publishers: readonly string[], nowMs: number): Set<string>;
}

/** The managed-by values of the agents that publish capacity (the watchers are chosen among them). */
export interface Publishers {
  list(): string[];
  hasSynced(): boolean;
}

/** The reads and writes of a lost node. */
export interface LostNodeReads {
  /** Whether the Node exists (any UID). */
  nodeExists(name: string, signal: AbortSignal): Promise<boolean>;
  /** Sets (a time) or removes (undefined) the node-gone-since note of a gone agent's Lease. */
  noteGoneSince(lease: string, sinceMs: number | undefined, signal: AbortSignal): Promise<boolean>;
  /** Every PV of the cluster (one paged list). */
  listVolumes(signal: AbortSignal): Promise<PersistentVolume[]>;
}
