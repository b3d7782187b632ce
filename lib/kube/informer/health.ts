/**
 * What an informer reports about itself, the bookkeeping behind it, and the
 * set of all informers that readiness and the metrics read: which are
 * synced, which fail to list or watch and since when. No I/O.
 */

/**
 * A stream that ends sooner than this without an error and without a single
 * event is a failure, as client-go's "very short watch" (there: 1 s).
 */
export const MIN_HEALTHY_STREAM_MS = 10_000;
/** kube-apiserver's bookmark period (1 min, cacher's defaultBookmarkFrequency) plus margin. */
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 90_000;

/** Why the list/watch loop started over. */
export type RestartReason = "error" | "expired" | "idle_timeout" | "stream_end" | "relist";
export const RESTART_REASONS: readonly RestartReason[] = [
  "error",
  "expired",
  "idle_timeout",
  "stream_end",
  "relist",
];

/** What an informer reports about itself (times: ms since the epoch). */
export interface InformerHealth {
  resource: string;
  synced: boolean;
  /** A watch stream is open now. */
  up: boolean;
  objects: number;
  lastListAt?: number;
  /** The last watch event, bookmarks included. */
  lastEventAt?: number;
  /**
   * Since when it fails to list or watch, if it does: set by the first
   * failure (error, idle watch, short stream, a wait for a Retry-After the
   * REST client does for it), cleared by a complete list,
   * by a stream that stayed open MIN_HEALTHY_STREAM_MS or by one that ended
   * after it sent an event.
   */
  failingSince?: number;
  lastError?: string;
  restarts: Record<RestartReason, number>;
}

/** What the store knows, added to the tracker's own state in a health report. */
interface StoreState {
  resource: string;
  synced: boolean;
  objects: number;
}

/**
 * One informer's health bookkeeping. Each event of the list-and-watch loop
 * changes the state; health() only reads it.
 */
export class HealthTracker {
  #lastListAt: number | undefined;
  #lastEventAt: number | undefined;
  #openedAt: number | undefined;
  #failingSince: number | undefined;
  #lastError: string | undefined;
  readonly #restarts: Record<RestartReason, number> = {
    error: 0,
    expired: 0,
    idle_timeout: 0,
    stream_end: 0,
    relist: 0,
  };

  /** A complete list: whatever failed before is over. */
  listed(now: number): void {
    this.#lastListAt = now;
    this.#failingSince = undefined;
    this.#lastError = undefined;
  }

  /** The watch stream opened. */
  opened(now: number): void {
    this.#openedAt = now;
  }

  /** A watch event arrived (bookmarks and errors included). */
  received(now: number): void {
    this.#lastEventAt = now;
  }

  /** The open stream made progress: it ended after an event, or it lasted. */
  progressed(): void {
    this.#failingSince = undefined;
  }

  /**
   * The pass ended and its stream (if one opened) is closed. A stream that
   * stayed open MIN_HEALTHY_STREAM_MS was progress, however it ended: what
   * fails next fails anew.
   */
  closed(now: number): void {
    if (this.#openedAt !== undefined && now - this.#openedAt >= MIN_HEALTHY_STREAM_MS) {
      this.#failingSince = undefined;
    }
    this.#openedAt = undefined;
  }

  restarted(reason: RestartReason): void {
    this.#restarts[reason]++;
  }

  /** A failure (a pass's, or a wait for a Retry-After): failing since the first of a run. */
  failed(now: number, error: string): void {
    this.#failingSince ??= now;
    this.#lastError = error;
  }

  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** The informer's state at `now`; changes nothing. */
  health(now: number, store: StoreState): InformerHealth {
    const openedAt = this.#openedAt;
    // A stream open long enough is progress, even before it ends.
    const lasting = openedAt !== undefined && now - openedAt >= MIN_HEALTHY_STREAM_MS;
    const failingSince = lasting ? undefined : this.#failingSince;
    return {
      resource: store.resource,
      synced: store.synced,
      up: openedAt !== undefined,
      objects: store.objects,
      ...(this.#lastListAt === undefined ? {} : { lastListAt: this.#lastListAt }),
      ...(this.#lastEventAt === undefined ? {} : { lastEventAt: this.#lastEventAt }),
      ...(failingSince === undefined ? {} : { failingSince }),
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
      restarts: { ...this.#restarts },
    };
  }
}

/** An informer, as the health set reads it. */
interface HealthSource {
  health(): InformerHealth;
}

/** Every informer of the agent, registered as it is created. */
export class InformerHealthSet {
  readonly #sources: HealthSource[] = [];

  add(source: HealthSource): void {
    this.#sources.push(source);
  }

  all(): InformerHealth[] {
    return this.#sources.map((source) => source.health());
  }

  /**
   * The readiness condition: true when every informer has listed once and
   * none has failed to list or watch for longer than `windowMs`; else why not.
   */
  readiness(now: number, windowMs: number): true | string {
    const problems: string[] = [];
    for (const health of this.all()) {
      if (!health.synced) {
        const why = health.lastError === undefined ? "" : `: ${health.lastError}`;
        problems.push(`${health.resource} not listed yet${why}`);
      } else if (health.failingSince !== undefined && now - health.failingSince > windowMs) {
        const seconds = Math.round((now - health.failingSince) / 1000);
        problems.push(
          `${health.resource} cannot list or watch for ${seconds} s (${
            health.lastError ?? "no answer"
          })`,
        );
      }
    }
    return problems.length === 0 ? true : problems.join("; ");
  }
}
