/**
 * A list-and-watch cache that never stops silently (the reflector). It lists
 * in pages, trims every object on arrival, watches from the last
 * resourceVersion with bookmarks, and restarts after anything else: an
 * error, a 410 Gone (relist), a watch silent for longer than the idle
 * timeout (relist: a server that went quiet may have held anything back), a
 * stream that ended. When it restarts is retry.ts's decision. A
 * stream that lived less than MIN_HEALTHY_STREAM_MS without a single event
 * counts as a failure: a server that accepts watches and drops them at once
 * is not healthy. One that sent events made progress however soon it ended
 * (kube-apiserver closes a watcher that falls behind a busy watch cache,
 * "Forcing ... watcher close due to unresponsiveness"): the watch resumes at
 * once from the last resourceVersion, as client-go's reflector does
 * (tools/cache/reflector.go, handleWatch: only a watch with no event is "very
 * short"). health() tells readiness and the metrics what happened last
 * (health.ts). There is no periodic resync: retries go through the
 * work queues. Handlers receive keys and the old/new trimmed objects
 * (store.ts), and must only enqueue work.
 */
import { API_SERVER_BACKOFF, type BackoffBounds } from "../../queue/backoff.ts";
import { objectKey } from "../../model/objects.ts";
import {
  DEFAULT_WATCH_IDLE_TIMEOUT_MS,
  HealthTracker,
  type InformerHealth,
  MIN_HEALTHY_STREAM_MS,
} from "./health.ts";
import { decodeWatchLine, listAll, type ListWatchTarget, watchOnce } from "./list_watch.ts";
import { FIRST_RETRY, isConnectionLoss, nextRetry, type Pass, passOfError } from "./retry.ts";
import { InformerStore } from "./store.ts";
import { waitBeforeRetry } from "./wait.ts";
import { waitForSync } from "../../runtime/synced.ts";
import type { KubeRest, RetryAfterWait } from "../rest/client.ts";
import type { CacheChange, InformerOptions } from "./types.ts";

export type { CacheChange, InformerOptions, RawObject } from "./types.ts";

const DEFAULT_BACKOFF: BackoffBounds = API_SERVER_BACKOFF;

/** The cache and its loop. */
export class Informer<T> {
  readonly #rest: KubeRest;
  readonly #options: InformerOptions<T>;
  readonly #store: InformerStore<T>;
  readonly #tracker = new HealthTracker();
  readonly #now: () => number;
  readonly #target: ListWatchTarget<T>;
  #resourceVersion = "";
  #synced = false;
  /** Events the open watch stream delivered (bookmarks included, errors not). */
  #streamEvents = 0;
  /** The last pass's watch stayed open MIN_HEALTHY_STREAM_MS or sent an event, however it ended. */
  #lastStreamLasted = false;
  /** relist() was called since the last list began. */
  #relistWanted = false;
  /** Ends the open watch early (relist()). */
  #watchEnd: AbortController | undefined;

  constructor(rest: KubeRest, options: InformerOptions<T>) {
    this.#rest = rest;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#store = new InformerStore(options.resource, options.logger);
    this.#target = { rest, options, onRetryAfter: this.#heldByRetryAfter };
  }

  /** Registers a change handler; only before run() (InformerStore.onChange). */
  onChange(handler: (change: CacheChange<T>) => void): void {
    this.#store.onChange(handler);
  }

  get resource(): string {
    return this.#options.resource;
  }

  get(key: string): T | undefined {
    return this.#store.get(key);
  }

  list(): T[] {
    return this.#store.list();
  }

  /** The cached objects by key. */
  entries(): [string, T][] {
    return this.#store.entries();
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

  /**
   * Lists again soon, from scratch, and watches from there: what `trim`
   * keeps has changed, and objects it dropped may now be kept. A list under
   * way is followed by another one.
   */
  relist(): void {
    this.#relistWanted = true;
    this.#watchEnd?.abort();
  }

  /** The informer's state now; reading it changes nothing. */
  health(): InformerHealth {
    const { resource } = this.#options;
    const store = { resource, synced: this.#synced, objects: this.#store.size };
    return this.#tracker.health(this.#now(), store);
  }

  /** Lists and watches until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    this.#store.seal();
    const after = this.#options.after;
    if (after !== undefined && !(await waitForSync([after], signal))) return;
    const bounds = this.#options.backoff ?? DEFAULT_BACKOFF;
    const random = this.#options.random ?? Math.random;
    let state = FIRST_RETRY;
    while (!signal.aborted) {
      const pass = await this.#pass(signal);
      if (signal.aborted) break;
      this.#tracker.restarted(pass.reason);
      const next = nextRetry(state, { pass, lasted: this.#lastStreamLasted }, { bounds, random });
      state = next.state;
      if (!next.decision.wait) continue;
      const delay = next.decision.delayMs;
      this.#noteFailure(pass, delay);
      await waitBeforeRetry(delay, {
        signal,
        answered: isConnectionLoss(pass) ? this.#rest.answered?.() : undefined,
        bounds,
        random,
        resource: this.#options.resource,
        logger: this.#options.logger,
      });
    }
  }

  /** One list (when needed) and one watch; how it ended. */
  async #pass(signal: AbortSignal): Promise<Pass> {
    let openedAt: number | undefined;
    const watchEnd = new AbortController();
    const stop = () => watchEnd.abort();
    signal.addEventListener("abort", stop, { once: true });
    try {
      while (this.#resourceVersion === "" || this.#relistWanted) await this.#relist(signal);
      const started = this.#now();
      this.#watchEnd = watchEnd;
      const end = await watchOnce(this.#target, {
        resourceVersion: this.#resourceVersion,
        inactivityMs: this.#idleTimeoutMs(),
        signal: watchEnd.signal,
        onOpen: () => this.#tracker.opened(openedAt = this.#now()),
        onLine: (line) => this.#apply(line),
      });
      if (end === "aborted" && !signal.aborted) return { reason: "relist" };
      if (end === "idle") {
        this.#resourceVersion = "";
        return { reason: "idle_timeout" };
      }
      if (end === "broken") return { reason: "error", error: new Error("watch stream broke") };
      const healthy = this.#streamProgressed(started);
      if (healthy) this.#tracker.progressed();
      return { reason: "stream_end", healthy };
    } catch (error) {
      const pass = passOfError(error);
      if (pass.reason === "expired") this.#resourceVersion = "";
      return pass;
    } finally {
      signal.removeEventListener("abort", stop);
      this.#watchEnd = undefined;
      this.#lastStreamLasted = openedAt !== undefined && this.#streamProgressed(openedAt);
      this.#tracker.closed(this.#now());
      this.#streamEvents = 0;
    }
  }

  /** The stream started at `since` sent an event or stayed open MIN_HEALTHY_STREAM_MS. */
  #streamProgressed(since: number): boolean {
    return this.#streamEvents > 0 || this.#now() - since >= MIN_HEALTHY_STREAM_MS;
  }

  #noteFailure(pass: Pass, retryInMs: number): void {
    const { resource, logger } = this.#options;
    const delay = Math.round(retryInMs);
    if (pass.reason === "expired") {
      // Routine (the watch cache moved on): a relist, not a failure of the API server.
      logger.info({ resource, retryInMs: delay }, "Watch expired (410 Gone), relisting");
      return;
    }
    if (pass.reason === "idle_timeout") {
      this.#tracker.failed(this.#now(), `watch sent nothing for ${this.#idleTimeoutMs()} ms`);
      logger.warn(
        { resource, idleMs: this.#idleTimeoutMs(), retryInMs: delay },
        "Watch stalled (nothing received, not even a bookmark): relisting",
      );
      return;
    }
    const error = pass.reason === "error"
      ? (pass.error as Error)?.message ?? String(pass.error)
      : `watch ended after less than ${MIN_HEALTHY_STREAM_MS} ms`;
    this.#tracker.failed(this.#now(), error);
    logger.warn(
      { resource, err: pass.reason === "error" ? pass.error : error, retryInMs: delay },
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
    // kube-apiserver's text ends with a newline that would split readiness's one-line reasons.
    const seconds = Math.round(wait.waitMs / 1000);
    this.#tracker.failed(
      this.#now(),
      `${wait.error.status} ${wait.error.message.trim()}: waiting ${seconds} s as its Retry-After asks`,
    );
    this.#options.logger.debug(
      { resource: this.#options.resource, status: wait.error.status, waitMs: wait.waitMs },
      "List/watch refused with Retry-After: waiting",
    );
  };

  #idleTimeoutMs(): number {
    return this.#options.idleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS;
  }

  async #relist(signal: AbortSignal): Promise<void> {
    this.#relistWanted = false;
    const { objects, resourceVersion } = await listAll(this.#target, signal);
    this.#store.replace(objects, this.#options.resourceVersionOf);
    this.#options.relisted?.(this.#store.keys());
    this.#resourceVersion = resourceVersion;
    this.#synced = true;
    this.#tracker.listed(this.#now());
  }

  /** Applies one watch event line; returns the error that must restart the watch, if any. */
  #apply(line: string): Error | undefined {
    this.#tracker.received(this.#now());
    const event = decodeWatchLine(line, this.#options.cutManagedFields === true);
    if (event instanceof Error) return event;
    // Progress: an ERROR event (a 410 among them) is not, or 410s in a row would not escalate.
    this.#streamEvents++;
    const resourceVersion = event.object.metadata?.resourceVersion;
    if (resourceVersion !== undefined && resourceVersion !== "") {
      this.#resourceVersion = resourceVersion;
    }
    if (event.type === "BOOKMARK") return undefined;
    const key = objectKey(event.object.metadata);
    const object = event.type === "DELETED" ? undefined : this.#options.trim(event.object);
    this.#store.put(key, object);
    return undefined;
  }
}
