/**
 * A list-and-watch cache that never stops silently. It lists in pages,
 * trims every object on arrival, watches from the last resourceVersion with
 * bookmarks, and restarts after anything else: an error, a 410 Gone (relist),
 * a watch silent for longer than the idle timeout (relist: a server that
 * went quiet may have held anything back), a stream that ended. Every restart
 * but the normal end of a long-lived stream waits a jittered, capped backoff
 * (lib/queue/backoff.ts), so that a thousand agents do not relist in the same
 * instant after an API server restart. A stream that lived less than
 * MIN_HEALTHY_STREAM_MS without a single event counts as a failure: a server
 * that accepts watches and drops them at once is not healthy. One that sent
 * events made progress however soon it ended (kube-apiserver closes a watcher
 * that falls behind a busy watch cache, "Forcing ... watcher close due to
 * unresponsiveness"): the watch resumes at once from the last resourceVersion,
 * as client-go's reflector does (tools/cache/reflector.go, handleWatch: only a
 * watch with no event is "very short"). health() tells readiness and the metrics
 * what happened last. There is no periodic resync: retries go through the
 * work queues. Handlers receive keys and the old/new trimmed objects, and
 * must only enqueue work.
 */
import { API_SERVER_BACKOFF, type BackoffBounds, jitteredDelay } from "../queue/backoff.ts";
import { sleep } from "../runtime/sleep.ts";
import { objectKey } from "../model/objects.ts";
import {
  DEFAULT_WATCH_IDLE_TIMEOUT_MS,
  type InformerHealth,
  MIN_HEALTHY_STREAM_MS,
  type RestartReason,
} from "./informer_health.ts";
import { hasStatus, KubeApiError, type StreamEnd } from "./rest_types.ts";
import type { KubeRest, RetryAfterWait } from "./rest.ts";
import { withoutManagedFields } from "./managed_fields.ts";
import type { CacheChange, InformerOptions, ListPage, WatchEvent } from "./informer_types.ts";

export type { CacheChange, InformerOptions, RawObject } from "./informer_types.ts";

class GoneError extends Error {}

const MIN_WATCH_TIMEOUT_S = 300;
const DEFAULT_BACKOFF: BackoffBounds = API_SERVER_BACKOFF;

/** How one pass of list-and-watch ended. */
type Pass =
  | { reason: "stream_end"; healthy: boolean }
  | { reason: "idle_timeout" | "expired"; error?: undefined }
  | { reason: "error"; error: unknown };

/**
 * How many failures in a row the backoff counts after a pass (0: none, go on
 * at once). A watch that lasted was progress: the failure that ended it is a
 * first one, not the next step of an escalation long over (client-go's
 * backoff manager also forgets failures after a quiet period). A server that
 * answers again after lost connections (back from a restart, still warming
 * up: a 403 before its authorizer synced) starts the count over, once until
 * the next progress. A 410 is an answer from a working server whose history
 * moved on (its restart, a compaction): relist after the base delay; only
 * 410s in a row escalate.
 */
class Escalation {
  #failures = 0;
  #previous: Pass | undefined;
  #fresh = true;

  next(pass: Pass, lasted: boolean): number {
    const previous = this.#previous;
    this.#previous = pass;
    if (pass.reason === "stream_end" && pass.healthy) {
      this.#fresh = true;
      return (this.#failures = 0);
    }
    if (lasted) this.#fresh = true;
    const back = previous !== undefined && isConnectionLoss(previous) && !isConnectionLoss(pass);
    const firstGone = pass.reason === "expired" && previous?.reason !== "expired";
    if (lasted || firstGone || (back && this.#fresh)) this.#failures = 0;
    if (back) this.#fresh = false;
    return ++this.#failures;
  }
}

/** The pass ended without any HTTP answer: refused, reset, timed out, or a watch that broke. */
function isConnectionLoss(pass: Pass): boolean {
  if (pass.reason !== "error") return false;
  return !(pass.error instanceof KubeApiError || pass.error instanceof WatchEventError);
}

/** The server answered, in the watch stream, with something that ends the watch. */
class WatchEventError extends Error {}

/** The cache and its loop. */
export class Informer<T> {
  readonly #rest: KubeRest;
  readonly #options: InformerOptions<T>;
  readonly #store = new Map<string, T>();
  readonly #handlers: ((change: CacheChange<T>) => void)[] = [];
  readonly #now: () => number;
  #resourceVersion = "";
  #synced = false;
  #lastListAt: number | undefined;
  #lastEventAt: number | undefined;
  #openedAt: number | undefined;
  /** Events the open watch stream delivered (bookmarks included, errors not). */
  #streamEvents = 0;
  /** The last pass's watch stayed open MIN_HEALTHY_STREAM_MS or sent an event, however it ended. */
  #lastStreamLasted = false;
  #failingSince: number | undefined;
  #lastError: string | undefined;
  readonly #restarts: Record<RestartReason, number> = {
    error: 0,
    expired: 0,
    idle_timeout: 0,
    stream_end: 0,
  };
  #started = false;

  constructor(rest: KubeRest, options: InformerOptions<T>) {
    this.#rest = rest;
    this.#options = options;
    this.#now = options.now ?? Date.now;
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

  get resource(): string {
    return this.#options.resource;
  }

  get(key: string): T | undefined {
    return this.#store.get(key);
  }

  list(): T[] {
    return [...this.#store.values()];
  }

  /** The cached objects by key. */
  entries(): [string, T][] {
    return [...this.#store];
  }

  /** The cached objects' keys, not copied: read them before the cache next changes. */
  keys(): IterableIterator<string> {
    return this.#store.keys();
  }

  get size(): number {
    return this.#store.size;
  }

  /** True once the first full list has been stored. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** The informer's state now. */
  health(): InformerHealth {
    const now = this.#now();
    const openedAt = this.#openedAt;
    // A stream open long enough is progress, even before it ends.
    if (openedAt !== undefined && now - openedAt >= MIN_HEALTHY_STREAM_MS) {
      this.#failingSince = undefined;
    }
    return {
      resource: this.#options.resource,
      synced: this.#synced,
      up: openedAt !== undefined,
      objects: this.#store.size,
      ...(this.#lastListAt === undefined ? {} : { lastListAt: this.#lastListAt }),
      ...(this.#lastEventAt === undefined ? {} : { lastEventAt: this.#lastEventAt }),
      ...(this.#failingSince === undefined ? {} : { failingSince: this.#failingSince }),
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
      restarts: { ...this.#restarts },
    };
  }

  /** Lists and watches until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    this.#started = true;
    const backoff = this.#options.backoff ?? DEFAULT_BACKOFF;
    const random = this.#options.random ?? Math.random;
    const escalation = new Escalation();
    while (!signal.aborted) {
      const pass = await this.#pass(signal);
      if (signal.aborted) break;
      this.#restarts[pass.reason]++;
      const failures = escalation.next(pass, this.#lastStreamLasted);
      if (failures === 0) continue;
      const delay = jitteredDelay(failures - 1, backoff, random);
      this.#noteFailure(pass, delay);
      await this.#backOff(delay, { signal, lostConnection: isConnectionLoss(pass) });
    }
  }

  /**
   * Waits `delayMs`. After a lost connection (no HTTP answer at all), an
   * answer the API server gives any other request of this client meanwhile
   * (it is back from a restart) ends the wait early: the informer tries again
   * after a base delay, jittered, instead of sitting out a backoff of up to
   * 30 s while the agent could work. Not after an error status: that server
   * was there and refused this informer.
   */
  async #backOff(delayMs: number, options: { signal: AbortSignal; lostConnection: boolean }) {
    const { signal } = options;
    const backoff = this.#options.backoff ?? DEFAULT_BACKOFF;
    const answered = options.lostConnection ? this.#rest.answered?.() : undefined;
    if (answered === undefined || delayMs <= backoff.baseMs) {
      return void await sleep(delayMs, signal);
    }
    const early = new AbortController();
    const stop = () => early.abort();
    signal.addEventListener("abort", stop, { once: true });
    void answered.then(stop);
    const slept = await sleep(delayMs, early.signal);
    signal.removeEventListener("abort", stop);
    if (slept || signal.aborted) return;
    const retryInMs = Math.round(jitteredDelay(0, backoff, this.#options.random ?? Math.random));
    this.#options.logger.info(
      { resource: this.#options.resource, retryInMs },
      "The API server answers again: retrying",
    );
    await sleep(retryInMs, signal);
  }

  /** One list (when needed) and one watch; how it ended. */
  async #pass(signal: AbortSignal): Promise<Pass> {
    try {
      if (this.#resourceVersion === "") await this.#relist(signal);
      const started = this.#now();
      const end = await this.#watch(signal);
      if (end === "idle") {
        this.#resourceVersion = "";
        return { reason: "idle_timeout" };
      }
      if (end === "broken") return { reason: "error", error: new Error("watch stream broke") };
      const healthy = this.#streamProgressed(started);
      if (healthy) this.#failingSince = undefined;
      return { reason: "stream_end", healthy };
    } catch (error) {
      if (error instanceof GoneError || hasStatus(error, 410)) {
        this.#resourceVersion = "";
        return { reason: "expired" };
      }
      return { reason: "error", error };
    } finally {
      const openedAt = this.#openedAt;
      this.#lastStreamLasted = openedAt !== undefined && this.#streamProgressed(openedAt);
      this.#openedAt = undefined;
      this.#streamEvents = 0;
    }
  }

  /** The stream started at `since` sent an event or stayed open MIN_HEALTHY_STREAM_MS. */
  #streamProgressed(since: number): boolean {
    return this.#streamEvents > 0 || this.#now() - since >= MIN_HEALTHY_STREAM_MS;
  }

  #noteFailure(pass: Pass, retryInMs: number): void {
    const { resource } = this.#options;
    const delay = Math.round(retryInMs);
    if (pass.reason === "expired") {
      // Routine (the watch cache moved on): a relist, not a failure of the API server.
      this.#options.logger.info(
        { resource, retryInMs: delay },
        "Watch expired (410 Gone), relisting",
      );
      return;
    }
    this.#failingSince ??= this.#now();
    if (pass.reason === "idle_timeout") {
      this.#lastError = `watch sent nothing for ${this.#idleTimeoutMs()} ms`;
      this.#options.logger.warn(
        { resource, idleMs: this.#idleTimeoutMs(), retryInMs: delay },
        "Watch stalled (nothing received, not even a bookmark): relisting",
      );
      return;
    }
    this.#lastError = pass.reason === "error"
      ? (pass.error as Error)?.message ?? String(pass.error)
      : `watch ended after less than ${MIN_HEALTHY_STREAM_MS} ms`;
    this.#options.logger.warn(
      { resource, err: pass.reason === "error" ? pass.error : this.#lastError, retryInMs: delay },
      "List/watch failed, restarting",
    );
  }

  /**
   * The list or watch waits out a Retry-After inside the REST client (up to
   * ten waits of up to a minute each): a failure like any other for
   * readiness, though the pass has not ended. A complete list or a watch
   * that lasts clears it as usual.
   */
  readonly #heldByRetryAfter = (wait: RetryAfterWait): void => {
    this.#failingSince ??= this.#now();
    // kube-apiserver's text ends with a newline that would split readiness's one-line reasons.
    this.#lastError = `${wait.error.status} ${wait.error.message.trim()}: waiting ${
      Math.round(wait.waitMs / 1000)
    } s as its Retry-After asks`;
    this.#options.logger.debug(
      { resource: this.#options.resource, status: wait.error.status, waitMs: wait.waitMs },
      "List/watch refused with Retry-After: waiting",
    );
  };

  #idleTimeoutMs(): number {
    return this.#options.idleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS;
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
        withoutManagedFields: this.#options.cutManagedFields === true,
        onRetryAfter: this.#heldByRetryAfter,
      });
      for (const raw of page.items ?? []) {
        const object = this.#options.trim(raw);
        if (object !== undefined) seen.set(objectKey(raw.metadata), object);
      }
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? "";
    } while (continueToken !== undefined && !signal.aborted);
    this.#replace(seen);
    this.#resourceVersion = resourceVersion;
    this.#synced = true;
    this.#lastListAt = this.#now();
    this.#failingSince = undefined;
    this.#lastError = undefined;
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

  async #watch(signal: AbortSignal): Promise<StreamEnd> {
    const random = this.#options.random ?? Math.random;
    const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_S * (1 + random()));
    // Ends this one watch (not the informer) when an event says it must restart.
    const watchEnd = new AbortController();
    const stop = () => watchEnd.abort();
    signal.addEventListener("abort", stop, { once: true });
    let failure: Error | undefined;
    try {
      const end = await this.#rest.stream({
        method: "GET",
        path: this.#options.path,
        query: this.#selectors({
          watch: true,
          allowWatchBookmarks: true,
          resourceVersion: this.#resourceVersion,
          timeoutSeconds,
        }),
        onRetryAfter: this.#heldByRetryAfter,
      }, {
        signal: watchEnd.signal,
        inactivityMs: this.#idleTimeoutMs(),
        onOpen: () => (this.#openedAt = this.#now()),
        onLine: (line) => {
          if (failure !== undefined) return;
          failure = this.#apply(line);
          if (failure !== undefined) watchEnd.abort();
        },
      });
      if (failure !== undefined) throw failure;
      return end;
    } catch (error) {
      // Aborting the request to end the watch surfaces as an error; the reason is `failure`.
      if (failure !== undefined) throw failure;
      if (signal.aborted) return "aborted";
      throw error;
    } finally {
      signal.removeEventListener("abort", stop);
    }
  }

  /** Applies one watch event line; returns the error that must restart the watch, if any. */
  #apply(line: string): Error | undefined {
    this.#lastEventAt = this.#now();
    let event: WatchEvent;
    try {
      // The trim functions drop managedFields; cut, they are never allocated.
      const text = this.#options.cutManagedFields === true ? withoutManagedFields(line) : line;
      event = JSON.parse(text) as WatchEvent;
    } catch {
      return new WatchEventError(`watch sent a line that is not JSON: ${line.slice(0, 200)}`);
    }
    if (event.type === "ERROR") {
      if (event.object.code === 410) return new GoneError("watch expired");
      return new WatchEventError(
        `watch error: ${event.object.message ?? JSON.stringify(event.object)}`,
      );
    }
    // Progress: an ERROR event (a 410 among them) is not, or 410s in a row would not escalate.
    this.#streamEvents++;
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
