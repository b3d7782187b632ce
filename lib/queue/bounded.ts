/**
 * A map that never outgrows its limit. Everything the agent remembers per
 * claim, volume or event outside the informers' caches is kept in one: when
 * it is full, the oldest entry goes (or, for a buffer of work, the new one is
 * refused), is counted, and the size is reported, so that a flood of input
 * costs a bounded amount of memory and shows on a dashboard.
 */

/** Told of the size after each change, and of each entry that had to go. */
export interface BoundObserver {
  size(entries: number): void;
  evicted(): void;
}

const NO_OBSERVER: BoundObserver = { size: () => {}, evicted: () => {} };

/** A Map bounded by `limit` entries, in insertion order; the oldest goes first. */
export class BoundedMap<K, V> {
  readonly limit: number;
  readonly #entries = new Map<K, V>();
  readonly #observer: BoundObserver;
  #evictions = 0;

  constructor(limit: number, observer: BoundObserver = NO_OBSERVER) {
    if (!(limit >= 1)) throw new Error(`a bounded map needs a limit of at least 1, got ${limit}`);
    this.limit = limit;
    this.#observer = observer;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Entries evicted to make room since creation. */
  get evictions(): number {
    return this.#evictions;
  }

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Sets the entry (as the newest); evicts the oldest entries while over the limit. */
  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.limit) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
      this.#evictions++;
      this.#observer.evicted();
    }
    this.#observer.size(this.#entries.size);
  }

  delete(key: K): boolean {
    const deleted = this.#entries.delete(key);
    if (deleted) this.#observer.size(this.#entries.size);
    return deleted;
  }

  /** Oldest first. */
  entries(): IterableIterator<[K, V]> {
    return this.#entries.entries();
  }

  /** Removes the oldest entries while `drop` says so (e.g. expired ones); returns how many. */
  dropOldestWhile(drop: (key: K, value: V) => boolean): number {
    let dropped = 0;
    for (const [key, value] of this.#entries) {
      if (!drop(key, value)) break;
      this.#entries.delete(key);
      dropped++;
    }
    if (dropped > 0) this.#observer.size(this.#entries.size);
    return dropped;
  }
}
