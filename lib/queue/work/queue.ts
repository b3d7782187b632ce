/**
 * client-go's rate-limiting work queue for string keys. A key is waiting at
 * most once (dirty set), is handed to at most one worker at a time
 * (processing set), and a key added while it is processed runs again after
 * done(). Delayed adds keep the earliest time per key.
 */
import { AbortFanout, type Unsubscribe } from "../abort_fanout.ts";
import { type Clock, realClock } from "../clock.ts";
import { DelayedAdds } from "./delayed_adds.ts";
import { KeyFifo } from "./key_fifo.ts";
import { noQueueMetrics, type QueueMetricsSink } from "./metrics.ts";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate_limiters.ts";

/** Collaborators of a queue; each has a production default. */
interface WorkQueueOptions {
  /** Real time unless a test injects a FakeClock. */
  clock?: Clock;
  /** client-go's DefaultTypedControllerRateLimiter, on the queue's clock, unless given. */
  rateLimiter?: RateLimiter;
  /** Reports nothing unless given (see createWorkQueueMetrics). */
  metrics?: QueueMetricsSink;
}

type Resolve = (value: boolean) => void;
type Getter = (key: string | undefined) => void;

/** A deduplicating, rate-limited FIFO of keys with client-go's semantics. */
export class WorkQueue {
  readonly #queue = new KeyFifo();
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  /** Pending get() calls, served in call order, each with the end of its abort subscription. */
  readonly #getters = new Map<Getter, Unsubscribe | undefined>();
  /** A worker calls get() with its pool's signal once per key: one listener serves them all. */
  readonly #aborts = new AbortFanout();
  /** Pending shutDownWithDrain() calls. */
  readonly #drainers = new Set<Resolve>();
  readonly #delayed: DelayedAdds;
  readonly #rateLimiter: RateLimiter;
  readonly #metrics: QueueMetricsSink;
  #shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    const clock = options.clock ?? realClock;
    this.#delayed = new DelayedAdds(clock, (key) => this.add(key));
    this.#rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter({ now: clock.now });
    this.#metrics = options.metrics ?? noQueueMetrics;
  }

  /** Queues `key` unless it is already waiting; a key being processed is queued again at done(). */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#metrics.add(key);
    this.#dirty.add(key);
    if (this.#processing.has(key)) return;
    this.#queue.push(key);
    this.#serveGetters();
  }

  /**
   * The next key, which the caller owns until done(key). Resolves undefined
   * once the queue is shut down and empty, or when `signal` aborts.
   */
  get(signal?: AbortSignal): Promise<string | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    if (this.#queue.length > 0) return Promise.resolve(this.#take());
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const unsubscribe = signal === undefined ? undefined : this.#aborts.subscribe(signal, () => {
        this.#getters.delete(resolve);
        resolve(undefined);
      });
      this.#getters.set(resolve, unsubscribe);
    });
  }

  /** The worker finished `key`; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    // client-go would push a waiting key a second time here; a stray done() must not.
    if (!this.#processing.delete(key)) return;
    this.#metrics.done(key);
    if (this.#dirty.has(key)) {
      this.#queue.push(key);
      this.#serveGetters();
    }
    if (this.#processing.size === 0) this.#resolveDrainers(true);
  }

  /** Keys waiting to be taken (not those processed or delayed). */
  len(): number {
    return this.#queue.length;
  }

  /** Adds `key` after `ms`; if it already waits for an earlier time, that time stays. */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    // client-go counts every delayed add as a retry, including the immediate ones.
    this.#metrics.retry();
    if (ms <= 0) this.add(key);
    else this.#delayed.schedule(key, ms);
  }

  /** Adds `key` after the wait its rate limiter decides, counting one more failure. */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) return;
    this.addAfter(key, this.#rateLimiter.when(key));
  }

  /** The key succeeded: its failures no longer lengthen its next wait. */
  forget(key: string): void {
    this.#rateLimiter.forget(key);
  }

  /** Failures counted for `key` since it was last forgotten. */
  numRequeues(key: string): number {
    return this.#rateLimiter.numRequeues(key);
  }

  isShuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Refuses further adds and drops delayed ones. Keys already queued are still
   * handed out; getters then receive undefined. Ends a pending drain early.
   */
  shutDown(): void {
    this.#stop();
    this.#resolveDrainers(this.#processing.size === 0);
  }

  /**
   * As shutDown(), then resolves true once no key is being processed, or
   * false if `signal` aborts or shutDown() is called first.
   */
  shutDownWithDrain(signal?: AbortSignal): Promise<boolean> {
    this.#stop();
    if (this.#processing.size === 0) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        this.#drainers.delete(drainer);
        resolve(false);
      };
      const drainer = (drained: boolean) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(drained);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#drainers.add(drainer);
    });
  }

  #take(): string | undefined {
    const key = this.#queue.shift();
    if (key === undefined) return undefined;
    this.#metrics.get(key);
    this.#processing.add(key);
    this.#dirty.delete(key);
    return key;
  }

  /** Hands queued keys to waiting getters now, so a woken getter never finds the queue empty. */
  #serveGetters(): void {
    for (const [getter, unsubscribe] of this.#getters) {
      if (this.#queue.length === 0) return;
      this.#getters.delete(getter);
      unsubscribe?.();
      getter(this.#take());
    }
  }

  #stop(): void {
    this.#shuttingDown = true;
    this.#delayed.clear();
    // Getters only wait while the queue is empty, so they are told it is over.
    for (const [getter, unsubscribe] of this.#getters) {
      unsubscribe?.();
      getter(undefined);
    }
    this.#getters.clear();
  }

  #resolveDrainers(drained: boolean): void {
    for (const drainer of this.#drainers) drainer(drained);
    this.#drainers.clear();
  }
}
