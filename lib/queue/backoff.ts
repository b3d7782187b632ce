/**
 * The one exponential backoff of the agent (client-go's
 * ItemExponentialFailureRateLimiter arithmetic), used by the work queues'
 * rate limiters and by the informers' restarts. Pure; durations in
 * milliseconds.
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
