/**
 * The agent's own pulse, for liveness: a timer that beats every second and
 * measures how late each beat was. A late beat means the event loop was
 * busy (or starved) for that long; a beat that stops coming means timers no
 * longer run at all. Nothing here waits on the driver or the API server.
 */

/** How the heartbeat looks now. */
export interface HeartbeatStatus {
  /** Milliseconds since the last beat. */
  ageMs: number;
  /** The largest lateness of a beat over the last `windowBeats` beats. */
  maxLagMs: number;
}

/** Beat period. */
const HEARTBEAT_INTERVAL_MS = 1000;
/**
 * A heartbeat older than this fails liveness. Ten beats: a busy loop that
 * stalls a few seconds (a large list parsed, a GC) is not a dead agent;
 * ten seconds without a single timer is, and the kubelet's probe (every
 * 10 s, 3 failures) restarts it within half a minute.
 */
export const HEARTBEAT_STALE_MS = 10_000;

/** The timer and what it measured. */
export class Heartbeat {
  readonly #now: () => number;
  readonly #intervalMs: number;
  readonly #lags: number[] = [];
  readonly #windowBeats: number;
  #lastBeat: number;

  constructor(options: { intervalMs?: number; windowBeats?: number; now?: () => number } = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#intervalMs = options.intervalMs ?? HEARTBEAT_INTERVAL_MS;
    this.#windowBeats = options.windowBeats ?? 60;
    this.#lastBeat = this.#now();
  }

  /** Beats until `signal` aborts. */
  start(signal: AbortSignal): void {
    if (signal.aborted) return;
    this.#lastBeat = this.#now();
    const timer = setInterval(() => this.beat(), this.#intervalMs);
    signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  }

  /** One beat (the timer's; tests call it with a fake clock). */
  beat(): void {
    const now = this.#now();
    this.#lags.push(Math.max(0, now - this.#lastBeat - this.#intervalMs));
    if (this.#lags.length > this.#windowBeats) this.#lags.shift();
    this.#lastBeat = now;
  }

  status(): HeartbeatStatus {
    return {
      ageMs: this.#now() - this.#lastBeat,
      maxLagMs: this.#lags.reduce((max, lag) => Math.max(max, lag), 0),
    };
  }
}
