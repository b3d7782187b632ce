/**
 * A list-and-watch cache that never stops silently. It lists in pages,
 * trims every object on arrival, watches from the last resourceVersion with
 * bookmarks, relists on 410 Gone, restarts with backoff after any error, and
 * restarts a watch that has gone quiet for too long (the staleness watchdog).
 * There is no periodic resync: retries go through the work queues.
 * Handlers receive keys and the old/new trimmed objects, and must only
 * enqueue work.
 */
import type { Logger } from "../log/logger.ts";
import { type BackoffBounds, exponentialDelay } from "../queue/backoff.ts";
import { sleep } from "../runtime/sleep.ts";
import { objectKey } from "../model/objects.ts";
import { hasStatus } from "./rest_types.ts";
import type { KubeRest } from "./rest.ts";

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
  logger: Logger;
  pageSize?: number;
  /** Restart delays after errors: base·2^(failures-1), capped (client-go's reflector: 1 s to 30 s). */
  backoff?: BackoffBounds;
  /** A watch that delivers nothing (not even a bookmark) for this long is restarted. */
  staleAfterMs?: number;
  random?: () => number;
}

/** An object as the API server sends it: only metadata is assumed. */
export interface RawObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  [field: string]: unknown;
}

interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: RawObject & { code?: number; message?: string };
}

class GoneError extends Error {}

interface ListPage {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: RawObject[];
}

const MIN_WATCH_TIMEOUT_S = 300;

/** The cache and its loop. */
export class Informer<T> {
  readonly #rest: KubeRest;
  readonly #options: InformerOptions<T>;
  readonly #store = new Map<string, T>();
  readonly #handlers: ((change: CacheChange<T>) => void)[] = [];
  #resourceVersion = "";
  #synced = false;
  #lastActivity = Date.now();
  #restarts = 0;
  #started = false;

  constructor(rest: KubeRest, options: InformerOptions<T>) {
    this.#rest = rest;
    this.#options = options;
  }

  /**
   * Registers a change handler. Only before run(): the objects of the first
   * list are announced once, so a handler registered later would never hear
   * of them (a claim listed at start would wait for its next update).
   */
  onChange(handler: (change: CacheChange<T>) => void): void {
    if (this.#started) {
      throw new Error(`${this.#options.resource} informer: onChange() after run() has started`);
    }
    this.#handlers.push(handler);
  }

  get(key: string): T | undefined {
    return this.#store.get(key);
  }

  list(): T[] {
    return [...this.#store.values()];
  }

  get size(): number {
    return this.#store.size;
  }

  /** True once the first full list has been stored. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** Milliseconds since the last list page or watch event (bookmarks included). */
  idleMs(): number {
    return Date.now() - this.#lastActivity;
  }

  /** Number of times the list/watch loop restarted after an error. */
  get restarts(): number {
    return this.#restarts;
  }

  /** Lists and watches until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    this.#started = true;
    const backoff = this.#options.backoff ?? { baseMs: 1000, maxMs: 30_000 };
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (this.#resourceVersion === "") await this.#relist(signal);
        await this.#watch(signal);
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof GoneError || hasStatus(error, 410)) {
          this.#options.logger.info(
            { resource: this.#options.resource },
            "Watch expired (410 Gone), relisting",
          );
          this.#resourceVersion = "";
          continue;
        }
        failures++;
        this.#restarts++;
        const delay = exponentialDelay(failures - 1, backoff);
        this.#options.logger.warn(
          { resource: this.#options.resource, err: error, retryInMs: delay },
          "List/watch failed, restarting",
        );
        await sleep(delay, signal);
      }
    }
  }

  async #relist(signal: AbortSignal): Promise<void> {
    const seen = new Map<string, T>();
    let continueToken: string | undefined;
    let resourceVersion = "";
    do {
      const page = await this.#rest.request<ListPage>({
        method: "GET",
        path: this.#options.path,
        query: this.#selectors({ limit: this.#options.pageSize ?? 500, continue: continueToken }),
        signal,
        unmetered: continueToken !== undefined,
      });
      for (const raw of page.items ?? []) {
        const object = this.#options.trim(raw);
        if (object !== undefined) seen.set(objectKey(raw.metadata), object);
      }
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? "";
      this.#lastActivity = Date.now();
    } while (continueToken !== undefined && !signal.aborted);
    this.#replace(seen);
    this.#resourceVersion = resourceVersion;
    this.#synced = true;
  }

  #replace(fresh: Map<string, T>): void {
    for (const [key, old] of this.#store) {
      if (!fresh.has(key)) {
        this.#store.delete(key);
        this.#emit({ key, old, new: undefined });
      }
    }
    for (const [key, object] of fresh) {
      const old = this.#store.get(key);
      this.#store.set(key, object);
      const unchanged = old !== undefined &&
        this.#options.resourceVersionOf(old) === this.#options.resourceVersionOf(object);
      if (!unchanged) this.#emit({ key, old, new: object });
    }
  }

  async #watch(signal: AbortSignal): Promise<void> {
    const random = this.#options.random ?? Math.random;
    const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_S * (1 + random()));
    const staleAfterMs = this.#options.staleAfterMs ?? 2 * timeoutSeconds * 1000;
    // Ends this one watch (not the informer) when an event says it must restart.
    const watchEnd = new AbortController();
    const stop = () => watchEnd.abort();
    signal.addEventListener("abort", stop, { once: true });
    let failure: Error | undefined;
    try {
      await this.#rest.stream({
        method: "GET",
        path: this.#options.path,
        query: this.#selectors({
          watch: true,
          allowWatchBookmarks: true,
          resourceVersion: this.#resourceVersion,
          timeoutSeconds,
        }),
      }, {
        signal: watchEnd.signal,
        inactivityMs: staleAfterMs,
        onLine: (line) => {
          if (failure !== undefined) return;
          failure = this.#apply(line);
          if (failure !== undefined) watchEnd.abort();
        },
      });
    } catch (error) {
      // Aborting the request to end the watch surfaces as an error; the reason is `failure`.
      if (failure === undefined && !signal.aborted) throw error;
    } finally {
      signal.removeEventListener("abort", stop);
    }
    if (failure !== undefined) throw failure;
  }

  /** Applies one watch event line; returns the error that must restart the watch, if any. */
  #apply(line: string): Error | undefined {
    this.#lastActivity = Date.now();
    let event: WatchEvent;
    try {
      event = JSON.parse(line) as WatchEvent;
    } catch {
      return new Error(`watch sent a line that is not JSON: ${line.slice(0, 200)}`);
    }
    if (event.type === "ERROR") {
      if (event.object.code === 410) return new GoneError("watch expired");
      return new Error(`watch error: ${event.object.message ?? JSON.stringify(event.object)}`);
    }
    const resourceVersion = event.object.metadata?.resourceVersion;
    if (resourceVersion !== undefined && resourceVersion !== "") {
      this.#resourceVersion = resourceVersion;
    }
    if (event.type === "BOOKMARK") return undefined;
    const key = objectKey(event.object.metadata);
    const old = this.#store.get(key);
    const object = event.type === "DELETED" ? undefined : this.#options.trim(event.object);
    if (object === undefined) {
      if (old === undefined) return undefined;
      this.#store.delete(key);
    } else {
      this.#store.set(key, object);
    }
    this.#emit({ key, old, new: object });
    return undefined;
  }

  #emit(change: CacheChange<T>): void {
    for (const handler of this.#handlers) {
      try {
        handler(change);
      } catch (error) {
        this.#options.logger.error(
          { resource: this.#options.resource, err: error },
          "Informer handler failed",
        );
      }
    }
  }

  #selectors(query: Record<string, string | number | boolean | undefined>) {
    return {
      ...query,
      labelSelector: this.#options.labelSelector,
      fieldSelector: this.#options.fieldSelector,
    };
  }
}
