/**
 * An informer's cache: the trimmed objects by key, and the fan-out of every
 * change to the handlers registered before the informer ran. Handlers must
 * only enqueue work; one that throws is logged and the others still hear.
 */
import type { Logger } from "../../log/logger.ts";
import type { CacheChange } from "./types.ts";

export class InformerStore<T> {
  readonly #objects = new Map<string, T>();
  readonly #handlers: ((change: CacheChange<T>) => void)[] = [];
  readonly #resource: string;
  readonly #logger: Logger;
  #sealed = false;

  constructor(resource: string, logger: Logger) {
    this.#resource = resource;
    this.#logger = logger;
  }

  /**
   * Registers a change handler. Only before seal(): the objects of the first
   * list are announced once, so a handler registered later would never hear
   * of them (a claim listed at start would wait for its next update).
   */
  onChange(handler: (change: CacheChange<T>) => void): void {
    if (this.#sealed) {
      throw new Error(`${this.#resource} informer: onChange() after run() has started`);
    }
    this.#handlers.push(handler);
  }

  /** No handler may be added from now on. */
  seal(): void {
    this.#sealed = true;
  }

  get(key: string): T | undefined {
    return this.#objects.get(key);
  }

  list(): T[] {
    return [...this.#objects.values()];
  }

  entries(): [string, T][] {
    return [...this.#objects];
  }

  /** The keys, not copied: read them before the cache next changes. */
  keys(): IterableIterator<string> {
    return this.#objects.keys();
  }

  get size(): number {
    return this.#objects.size;
  }

  /**
   * Replaces the whole cache with a fresh list: announces what vanished, and
   * what is new or changed (`versionOf` tells an unchanged object).
   */
  replace(fresh: Map<string, T>, versionOf: (object: T) => string): void {
    for (const [key, old] of this.#objects) {
      if (!fresh.has(key)) {
        this.#objects.delete(key);
        this.#emit({ key, old, new: undefined });
      }
    }
    for (const [key, object] of fresh) {
      const old = this.#objects.get(key);
      this.#objects.set(key, object);
      const unchanged = old !== undefined && versionOf(old) === versionOf(object);
      if (!unchanged) this.#emit({ key, old, new: object });
    }
  }

  /** Stores `object` under `key`, or deletes the key (undefined); announces a change. */
  put(key: string, object: T | undefined): void {
    const old = this.#objects.get(key);
    if (object === undefined) {
      if (old === undefined) return;
      this.#objects.delete(key);
    } else {
      this.#objects.set(key, object);
    }
    this.#emit({ key, old, new: object });
  }

  #emit(change: CacheChange<T>): void {
    for (const handler of this.#handlers) {
      try {
        handler(change);
      } catch (error) {
        this.#logger.error({ resource: this.#resource, err: error }, "Informer handler failed");
      }
    }
  }
}
