/**
 * The one token bucket of the agent: golang.org/x/time/rate's bucket of
 * `burst` tokens refilled at `qps` per second, used two ways:
 *
 * - take(): wait for a token. The REST client's budget (--kube-api-qps and
 *   --kube-api-burst, and the capacity client's own pair), with one addition
 *   to client-go: waiters are served by priority. PV writes and claim updates
 *   go first; Events take only what is left, so that a burst of claims never
 *   waits behind its own Events while the total stays within the budget.
 * - reserve(): take a token now, possibly into debt, and answer how long the
 *   caller must wait until the debt is repaid (x/time/rate's Reserve(), the
 *   BucketRateLimiter of client-go's work queues).
 */
import { type Clock, realClock } from "./clock.ts";

/** Request priority. */
export type Priority = "high" | "low";

/** Refill rate and size of a token bucket. */
interface BucketLimits {
  qps: number;
  burst: number;
}

/** The state of a token bucket: tokens may go negative, a debt later refills repay. */
interface BucketState {
  tokens: number;
  lastMs: number;
}

/**
 * x/time/rate's Reserve(): refill for the time elapsed (at most up to burst),
 * take one token, and wait until the debt is repaid. A clock that went
 * backwards refills nothing. Pure.
 */
export function reserveToken(
  bucket: BucketState,
  options: BucketLimits & { nowMs: number },
): { bucket: BucketState; delayMs: number } {
  const refilled = refill(bucket, options);
  const tokens = refilled.tokens - 1;
  const delayMs = tokens < 0 ? (-tokens / options.qps) * 1000 : 0;
  return { bucket: { tokens, lastMs: refilled.lastMs }, delayMs };
}

/** The bucket after the time elapsed up to `nowMs`. */
function refill(bucket: BucketState, options: BucketLimits & { nowMs: number }): BucketState {
  const elapsedMs = Math.max(0, options.nowMs - bucket.lastMs);
  return {
    tokens: Math.min(options.burst, bucket.tokens + (elapsedMs / 1000) * options.qps),
    lastMs: Math.max(bucket.lastMs, options.nowMs),
  };
}

interface Waiter {
  priority: Priority;
  grant: (granted: boolean) => void;
}

/** A token bucket of `burst` tokens refilled at `qps` per second; it starts full. */
export class TokenBucket {
  readonly #limits: BucketLimits;
  readonly #clock: Clock;
  #state: BucketState;
  #waiters: Waiter[] = [];
  #cancelTimer: (() => void) | undefined = undefined;

  constructor(options: BucketLimits & { clock?: Clock }) {
    this.#limits = { qps: options.qps, burst: Math.max(1, options.burst) };
    this.#clock = options.clock ?? realClock;
    this.#state = { tokens: this.#limits.burst, lastMs: this.#clock.now() };
  }

  /** Takes one token, waiting as needed; resolves false if `signal` aborts first. */
  take(priority: Priority = "high", signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    this.#refill();
    if (this.#waiters.length === 0 && this.#state.tokens >= 1) {
      this.#state.tokens -= 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        priority,
        grant: (granted) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(granted);
        },
      };
      const onAbort = () => {
        this.#waiters = this.#waiters.filter((candidate) => candidate !== waiter);
        waiter.grant(false);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#enqueue(waiter);
      this.#schedule();
    });
  }

  /** Takes one token now, into debt if need be; returns the wait until it is repaid, in ms. */
  reserve(): number {
    const reserved = reserveToken(this.#state, { ...this.#limits, nowMs: this.#clock.now() });
    this.#state = reserved.bucket;
    return reserved.delayMs;
  }

  /** Number of requests waiting for a token. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Fails every waiter and stops the timer (shutdown). */
  close(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    for (const waiter of this.#waiters.splice(0)) waiter.grant(false);
  }

  #enqueue(waiter: Waiter): void {
    if (waiter.priority === "low") {
      this.#waiters.push(waiter);
      return;
    }
    const firstLow = this.#waiters.findIndex((candidate) => candidate.priority === "low");
    if (firstLow < 0) this.#waiters.push(waiter);
    else this.#waiters.splice(firstLow, 0, waiter);
  }

  #refill(): void {
    this.#state = refill(this.#state, { ...this.#limits, nowMs: this.#clock.now() });
  }

  #schedule(): void {
    if (this.#cancelTimer !== undefined || this.#waiters.length === 0) return;
    const waitMs = Math.max(0, ((1 - this.#state.tokens) / this.#limits.qps) * 1000);
    this.#cancelTimer = this.#clock.schedule(() => {
      this.#cancelTimer = undefined;
      this.#refill();
      while (this.#state.tokens >= 1 && this.#waiters.length > 0) {
        this.#state.tokens -= 1;
        this.#waiters.shift()?.grant(true);
      }
      this.#schedule();
    }, waitMs);
  }
}
