/**
 * client-go's token bucket (--kube-api-qps / --kube-api-burst), with one
 * addition: waiters are served by priority. PV writes and claim updates go
 * first; Events take only what is left, so that a burst of claims never waits
 * behind its own Events while the total stays within the operator's budget.
 */

/** Request priority. */
export type Priority = "high" | "low";

interface Waiter {
  priority: Priority;
  grant: (granted: boolean) => void;
}

/** Clock and timers, injectable for tests. */
export interface BucketClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const REAL_CLOCK: BucketClock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as number),
};

/** A token bucket of `burst` tokens refilled at `qps` per second. */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: BucketClock;
  #tokens: number;
  #lastRefill: number;
  #waiters: Waiter[] = [];
  #timer: unknown = undefined;

  constructor(options: { qps: number; burst: number; clock?: BucketClock }) {
    this.#qps = options.qps;
    this.#burst = Math.max(1, options.burst);
    this.#clock = options.clock ?? REAL_CLOCK;
    this.#tokens = this.#burst;
    this.#lastRefill = this.#clock.now();
  }

  /** Takes one token, waiting as needed; resolves false if `signal` aborts first. */
  take(priority: Priority = "high", signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    this.#refill();
    if (this.#waiters.length === 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
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

  /** Number of requests waiting for a token. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Fails every waiter and stops the timer (shutdown). */
  close(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
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
    const now = this.#clock.now();
    this.#tokens = Math.min(
      this.#burst,
      this.#tokens + ((now - this.#lastRefill) / 1000) * this.#qps,
    );
    this.#lastRefill = now;
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#waiters.length === 0) return;
    const waitMs = Math.max(0, ((1 - this.#tokens) / this.#qps) * 1000);
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#refill();
      while (this.#tokens >= 1 && this.#waiters.length > 0) {
        this.#tokens -= 1;
        this.#waiters.shift()?.grant(true);
      }
      this.#schedule();
    }, waitMs);
  }
}
