/** The informer's shapes: its options, the changes it reports, the API's raw objects and events. */
import type { Logger } from "../../log/logger.ts";
import type { BackoffBounds } from "../../queue/backoff.ts";

/** A change seen by the informer. */
export interface CacheChange<T> {
  key: string;
  old: T | undefined;
  new: T | undefined;
}

/** What to watch and how to keep it. */
export interface InformerOptions<T> {
  /** For logs, e.g. "persistentvolumeclaims". */
  resource: string;
  /** Collection path, e.g. "/api/v1/persistentvolumeclaims". */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Trims a raw API object to what the agent keeps; undefined means the
   * object is of no interest and is not kept at all (for example a claim
   * selected to another node). Its watch events still arrive, so an object
   * that becomes interesting is picked up from its next event.
   */
  trim: (raw: RawObject) => T | undefined;
  resourceVersionOf: (object: T) => string;
  /** Told the keys the cache holds after each full list (and its announced changes). */
  relisted?: (keys: IterableIterator<string>) => void;
  /** The first list waits until this cache has listed once: `trim` reads it. */
  after?: { hasSynced(): boolean };
  logger: Logger;
  pageSize?: number;
  /** Restart delays after failures: base·2^(failures-1), capped, jittered (client-go's reflector: 1 s to 30 s). */
  backoff?: BackoffBounds;
  /**
   * A watch that delivers nothing (not even a bookmark: kube-apiserver sends
   * one to every watch about once a minute) for this long is stalled: it is
   * ended and the resource listed again. Default DEFAULT_WATCH_IDLE_TIMEOUT_MS.
   */
  idleTimeoutMs?: number;
  /**
   * The resource is a built-in kind: its JSON is written from a Go struct, so
   * metadata.managedFields ends ObjectMeta, and rest/managed_fields.ts may cut them
   * out of the text before it is parsed. Not for custom resources (a
   * VolumeSnapshot): their keys are written sorted, managedFields before name.
   */
  cutManagedFields?: boolean;
  random?: () => number;
  /** Wall clock for health(); tests inject one. */
  now?: () => number;
}

/** An object as the API server sends it: only metadata is assumed. */
export interface RawObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  [field: string]: unknown;
}

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: RawObject & { code?: number; message?: string };
}

export interface ListPage {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: RawObject[];
}
