/**
 * What an informer reports about itself, and the set of all of them that
 * readiness and the metrics read: which informers are synced, which fail to
 * list or watch and since when. Pure.
 */

/**
 * A stream that ends sooner than this without an error and without a single
 * event is a failure, as client-go's "very short watch" (there: 1 s).
 */
export const MIN_HEALTHY_STREAM_MS = 10_000;
/** kube-apiserver's bookmark period (1 min, cacher's defaultBookmarkFrequency) plus margin. */
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 90_000;

/** Why the list/watch loop started over. */
export type RestartReason = "error" | "expired" | "idle_timeout" | "stream_end";
export const RESTART_REASONS: readonly RestartReason[] = [
  "error",
  "expired",
  "idle_timeout",
  "stream_end",
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

/** An informer, as the health set reads it. */
export interface HealthSource {
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
