/**
 * client-go's workqueue rate limiters. `when(key)` answers how long to wait
 * before the key is retried and counts the attempt; `forget(key)` ends the
 * tracking once the key succeeded.
 */
import { exponentialDelay } from "../backoff.ts";
import { realClock } from "../clock.ts";
import { TokenBucket } from "../token_bucket.ts";

/** How long a key waits before its next attempt, in milliseconds. */
export interface RateLimiter {
  /** The wait for this attempt; counts one more failure of the key. */
  when(key: string): number;
  /** The key succeeded (or was dropped): its failures are no longer counted. */
  forget(key: string): void;
  /** Failures counted for the key since it was last forgotten. */
  numRequeues(key: string): number;
}

/** client-go's ItemExponentialFailureRateLimiter: base·2^failures per key, capped at max. */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  readonly #failures = new Map<string, number>();
  readonly #bounds: { baseMs: number; maxMs: number };

  constructor(baseMs: number, maxMs: number) {
    this.#bounds = { baseMs, maxMs };
  }

  when(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    return exponentialDelay(failures, this.#bounds);
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

/**
 * external-provisioner's newItemExponentialFailureRateLimiterWithJitter
 * (pkg/controller/ratelimiter.go), the wait of the Immediate binding
 * ownership race: base·2^failures capped at max, minus a jitter of
 * U[0,1)·base, and 0 when the jitter is the larger. So the first attempt
 * waits in (0, base], the second in (base, 2·base], a capped one in
 * (max-base, max].
 */
export class JitteredExponentialRateLimiter implements RateLimiter {
  readonly #exponential: ItemExponentialFailureRateLimiter;
  readonly #baseMs: number;
  readonly #random: () => number;

  constructor(bounds: { baseMs: number; maxMs: number }, options: { random?: () => number } = {}) {
    this.#exponential = new ItemExponentialFailureRateLimiter(bounds.baseMs, bounds.maxMs);
    this.#baseMs = bounds.baseMs;
    this.#random = options.random ?? Math.random;
  }

  when(key: string): number {
    const delay = this.#exponential.when(key);
    const jitter = this.#baseMs * this.#random();
    return jitter > delay ? 0 : delay - jitter;
  }

  forget(key: string): void {
    this.#exponential.forget(key);
  }

  numRequeues(key: string): number {
    return this.#exponential.numRequeues(key);
  }
}

/**
 * client-go's BucketRateLimiter: one token bucket shared by all keys, which
 * bounds the overall retry rate; it tracks no key.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  readonly #bucket: TokenBucket;

  constructor(qps: number, burst: number, options: { now?: () => number } = {}) {
    const clock = { ...realClock, now: options.now ?? realClock.now };
    // x/time/rate starts with a full bucket.
    this.#bucket = new TokenBucket({ qps, burst, clock });
  }

  when(_key: string): number {
    return this.#bucket.reserve();
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/** client-go's MaxOfRateLimiter: every limiter counts the attempt; the longest wait wins. */
export class MaxOfRateLimiter implements RateLimiter {
  readonly #limiters: readonly RateLimiter[];

  constructor(limiters: readonly RateLimiter[]) {
    this.#limiters = limiters;
  }

  when(key: string): number {
    // Every limiter must see the attempt, so no short-circuit.
    return this.#limiters.map((limiter) => limiter.when(key)).reduce((a, b) => Math.max(a, b), 0);
  }

  forget(key: string): void {
    for (const limiter of this.#limiters) limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.#limiters.map((limiter) => limiter.numRequeues(key)).reduce(
      (a, b) => Math.max(a, b),
      0,
    );
  }
}

/**
 * client-go's DefaultTypedControllerRateLimiter, used by upstream's
 * "unsavedpvs" queue: per key 5 ms doubling up to 1000 s, and overall
 * at most 10 retries a second after a burst of 100.
 */
export function defaultControllerRateLimiter(options: { now?: () => number } = {}): RateLimiter {
  return new MaxOfRateLimiter([
    new ItemExponentialFailureRateLimiter(5, 1_000_000),
    new TokenBucketRateLimiter(10, 100, options),
  ]);
}
