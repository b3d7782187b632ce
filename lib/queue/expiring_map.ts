/**
 * A bounded map whose entries expire a fixed time after they were set, for
 * what the agent remembers about a claim "for a while". Every entry lives as
 * long, so the oldest expire first and are dropped at each set; past `limit`
 * the oldest goes early, which only shortens that entry's while.
 */
import { BoundedMap, type BoundObserver } from "./bounded.ts";

interface ExpiringMapOptions {
  retentionMs: number;
  limit: number;
  /** Milliseconds, Date.now by default. */
  now?: () => number;
  observer?: BoundObserver;
}

/** Values by key, each for `retentionMs` after it was set. */
export class ExpiringMap<K, V> {
  readonly #entries: BoundedMap<K, { value: V; until: number }>;
  readonly #retentionMs: number;
  readonly #now: () => number;

  constructor(options: ExpiringMapOptions) {
    this.#retentionMs = options.retentionMs;
    this.#now = options.now ?? Date.now;
    this.#entries = new BoundedMap(options.limit, options.observer);
  }

  get size(): number {
    return this.#entries.size;
  }

  set(key: K, value: V): void {
    const now = this.#now();
    this.#entries.dropOldestWhile((_key, entry) => entry.until <= now);
    this.#entries.set(key, { value, until: now + this.#retentionMs });
  }

  /** The value and the milliseconds it has left; undefined (and forgotten) once expired. */
  get(key: K): { value: V; remainingMs: number } | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    const remainingMs = entry.until - this.#now();
    if (remainingMs > 0) return { value: entry.value, remainingMs };
    this.#entries.delete(key);
    return undefined;
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }
}
