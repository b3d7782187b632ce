/**
 * The arithmetic of client-go's rate limiters, kept pure so that it can be
 * checked with tables. All durations are milliseconds.
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

/**
 * external-provisioner's jitter for node-deployment ownership: the exponential
 * delay minus base·random, never below zero, so agents on different nodes that
 * failed together do not retry in lock step.
 * `random` is in [0, 1): the first wait lies in (0, base], a capped one in (max-base, max].
 */
export function jitteredDelay(
  delayMs: number,
  options: { baseMs: number; random: number },
): number {
  return Math.max(0, delayMs - options.baseMs * options.random);
}

/** The state of a token bucket: tokens may go negative, a debt later adds repay. */
export interface TokenBucket {
  tokens: number;
  lastMs: number;
}

/** Refill rate and size of a token bucket. */
export interface BucketLimits {
  qps: number;
  burst: number;
}

/**
 * golang.org/x/time/rate's Reserve(): refill for the time elapsed (at most up
 * to burst), take one token, and wait until the debt is repaid. A clock that
 * went backwards refills nothing.
 */
export function reserveToken(
  bucket: TokenBucket,
  options: BucketLimits & { nowMs: number },
): { bucket: TokenBucket; delayMs: number } {
  const elapsedMs = Math.max(0, options.nowMs - bucket.lastMs);
  const refilled = Math.min(options.burst, bucket.tokens + (elapsedMs / 1000) * options.qps);
  const tokens = refilled - 1;
  const delayMs = tokens < 0 ? (-tokens / options.qps) * 1000 : 0;
  return { bucket: { tokens, lastMs: Math.max(bucket.lastMs, options.nowMs) }, delayMs };
}
