/**
 * The one exponential backoff of the agent (client-go's
 * ItemExponentialFailureRateLimiter arithmetic), used by the work queues'
 * rate limiters and by the informers' restarts, and its one jitter. Pure;
 * durations in milliseconds.
 */

/** Bounds of an exponential backoff. */
export interface BackoffBounds {
  baseMs: number;
  maxMs: number;
}

/**
 * base·2^failures capped at max. An overflow to Infinity is capped too, as
 * client-go caps a float that no longer fits into a Duration.
 */
export function exponentialDelay(failures: number, bounds: BackoffBounds): number {
  const delay = bounds.baseMs * 2 ** failures;
  return Number.isFinite(delay) && delay <= bounds.maxMs ? delay : bounds.maxMs;
}

/** The share of a delay that jitter may take away: delays fall in [d·(1-JITTER), d]. */
const JITTER = 0.5;

/**
 * exponentialDelay() with jitter taken off: `d·(1 - JITTER·random)`, so that
 * a thousand agents that failed at the same moment (an API server restart)
 * do not come back in the same instant, and never later than `maxMs`.
 * client-go's wait.Jitter adds up to the factor instead, which lets a capped
 * delay overshoot its cap; here the bound holds.
 */
export function jitteredDelay(
  failures: number,
  bounds: BackoffBounds,
  random: () => number = Math.random,
): number {
  return exponentialDelay(failures, bounds) * (1 - JITTER * random());
}

/**
 * The backoff of everything that waits for the API server to answer again:
 * the informers' restarts and the start-up calls.
 */
export const API_SERVER_BACKOFF: BackoffBounds = { baseMs: 1000, maxMs: 30_000 };
