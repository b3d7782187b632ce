/**
 * The one time source of the agent's timers: work queues, the token bucket
 * and the rate limiters take it, so that tests drive delays with fake time
 * (tests/fakes/clock.ts) instead of sleeping, and every pending timer can be
 * accounted for at shutdown.
 */

/** Milliseconds and timers; `schedule` returns the function that cancels the timer. */
export interface Clock {
  /** Monotonic milliseconds; only differences are meaningful. */
  now(): number;
  schedule(callback: () => void, ms: number): () => void;
}

/**
 * Wall time: performance.now() is monotonic, so NTP steps do not shift delays.
 *
 * A delay is rounded up to whole milliseconds: setTimeout truncates a
 * fractional one (measured: 82 of 100 timers of 20–25 ms fired before their
 * delay in Bun, 68 in Node), and the delays here are fractional, computed
 * from performance.now(). The token bucket's and the delayed adds' timers
 * then woke before their token or key was due, found nothing to do, and
 * woke again for the remaining fraction of a millisecond: a second wake-up
 * of the event loop for most tokens (338 timer callbacks for 200 tokens at
 * --kube-api-qps=5).
 */
export const realClock: Clock = {
  now: () => performance.now(),
  schedule: (callback, ms) => {
    const timer = setTimeout(callback, Math.ceil(ms));
    return () => clearTimeout(timer);
  },
};
