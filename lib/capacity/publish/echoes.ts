/**
 * Write echoes: the publisher never puts the result of its own write into
 * the cache (a cached copy of a write can be overwritten by the watch with an
 * older one, a race upstream's publisher had). Instead, the worker that wrote waits, still
 * holding its key, until the informer has delivered the write back. A second
 * sync of the same class therefore always starts from a cache that holds its
 * previous write: no Conflict from a stale resourceVersion, no duplicate from
 * a create the cache has not seen yet.
 *
 * Echoes are counted per key (a StorageClass name): a write expects one
 * event for an object of that class. An event that was expected is not work
 * for the queue; an unexpected one (someone else's change) is.
 */

interface Pending {
  count: number;
  waiters: Set<() => void>;
}

/** Expected informer events, per key. */
export class WriteEchoes {
  readonly #pending = new Map<string, Pending>();

  /** A write for `key` is about to be sent: expect one more event. */
  expect(key: string): void {
    const pending = this.#pending.get(key) ?? { count: 0, waiters: new Set() };
    pending.count++;
    this.#pending.set(key, pending);
  }

  /** The write failed (nothing will echo): expect one event less. */
  cancel(key: string): void {
    this.#expectOneLess(key);
  }

  /** An informer event for `key`; true when it was an expected echo. */
  observe(key: string): boolean {
    if ((this.#pending.get(key)?.count ?? 0) === 0) return false;
    this.#expectOneLess(key);
    return true;
  }

  /** Events still expected for `key`. */
  outstanding(key: string): number {
    return this.#pending.get(key)?.count ?? 0;
  }

  /**
   * Resolves true once every expected event for `key` arrived; false after
   * `timeoutMs` or when `signal` aborts, and then forgets them (a late event
   * is treated as someone else's change: one more sync, never a lost one).
   */
  allArrived(key: string, options: { timeoutMs: number; signal: AbortSignal }): Promise<boolean> {
    const pending = this.#pending.get(key);
    if (pending === undefined || pending.count === 0) return Promise.resolve(true);
    if (options.signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (arrived: boolean) => {
        clearTimeout(timer);
        options.signal.removeEventListener("abort", onAbort);
        pending.waiters.delete(onArrived);
        if (!arrived && this.#pending.get(key) === pending) this.#pending.delete(key);
        resolve(arrived);
      };
      const onArrived = () => finish(true);
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(false), options.timeoutMs);
      options.signal.addEventListener("abort", onAbort, { once: true });
      pending.waiters.add(onArrived);
    });
  }

  #expectOneLess(key: string): void {
    const pending = this.#pending.get(key);
    if (pending === undefined || pending.count === 0) return;
    pending.count--;
    if (pending.count > 0) return;
    this.#pending.delete(key);
    for (const waiter of [...pending.waiters]) waiter();
  }
}
