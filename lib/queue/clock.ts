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
 * fractional one, and the delays here are fractional, computed from
 * performance.now(). Without the rounding a timer would often wake just
 * before its token or key was due, find nothing to do, and wake the event
 * loop a second time for the remaining fraction of a millisecond.
 */
export const realClock: Clock = {
  now: () => performance.now(),
  schedule: (callback, ms) => {
    const timer = setTimeout(callback, Math.ceil(ms));
    return () => clearTimeout(timer);
  },
};
