/**
 * The time source of a work queue. Injected so that tests drive delays with
 * fake time instead of sleeping, and so that every pending timer can be
 * accounted for at shutdown.
 */

/** Milliseconds and timers; `schedule` returns the function that cancels the timer. */
export interface QueueClock {
  /** Monotonic milliseconds; only differences are meaningful. */
  now(): number;
  schedule(callback: () => void, ms: number): () => void;
}

/** Wall time: performance.now() is monotonic, so NTP steps do not shift delays. */
export const realClock: QueueClock = {
  now: () => performance.now(),
  schedule: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    return () => clearTimeout(timer);
  },
};
