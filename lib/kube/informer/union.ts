/**
 * One cache over informers of the same resource with different label
 * selectors, as if it were one informer: so that an agent is sent the
 * events of its own labelled objects and of unlabelled ones, and none of
 * what other nodes' agents labelled as theirs. An object whose labels are
 * edited moves from one part to another: the parts see that in two watch
 * streams, in either order, so for a moment it may be in both (the first
 * part's copy is the one read) or in neither (its handlers hear it deleted,
 * then added again; they only enqueue keys, and a worker in that gap finds
 * no object, as after any deletion).
 */
import { type InformerHealth, RESTART_REASONS, type RestartReason } from "./health.ts";
import type { CacheChange, Informer } from "./informer.ts";

export class InformerUnion<T> {
  readonly #resource: string;
  readonly #parts: readonly Informer<T>[];
  readonly #handlers: ((change: CacheChange<T>) => void)[] = [];
  #started = false;

  /** `parts` in the order their copies are preferred; their handlers are the union's. */
  constructor(resource: string, parts: readonly Informer<T>[]) {
    this.#resource = resource;
    this.#parts = parts;
    for (const part of parts) part.onChange((change) => this.#relay(part, change));
  }

  /** Registers a change handler; only before run(), as Informer.onChange(). */
  onChange(handler: (change: CacheChange<T>) => void): void {
    if (this.#started) throw new Error(`${this.#resource} informer: onChange() after run()`);
    this.#handlers.push(handler);
  }

  get resource(): string {
    return this.#resource;
  }

  get(key: string): T | undefined {
    for (const part of this.#parts) {
      const object = part.get(key);
      if (object !== undefined) return object;
    }
    return undefined;
  }

  list(): T[] {
    return [...this.#merged().values()];
  }

  /**
   * Counted without building the merged map, since readiness asks every
   * second: the first part whole, then each later part's keys that no earlier
   * part holds (an object is in two parts only while its labels move).
   */
  get size(): number {
    const parts = this.#parts;
    let size = parts[0]?.size ?? 0;
    for (let index = 1; index < parts.length; index++) {
      for (const key of parts[index]!.keys()) {
        if (!this.#heldBefore(index, key)) size++;
      }
    }
    return size;
  }

  /** Whether a part before `index` holds `key`. */
  #heldBefore(index: number, key: string): boolean {
    for (let earlier = 0; earlier < index; earlier++) {
      if (this.#parts[earlier]!.get(key) !== undefined) return true;
    }
    return false;
  }

  hasSynced(): boolean {
    return this.#parts.every((part) => part.hasSynced());
  }

  /** The parts' health as one informer's: synced and up when all are, failing when one is. */
  health(): InformerHealth {
    const parts = this.#parts.map((part) => part.health());
    const earliest = (times: (number | undefined)[]) =>
      times.includes(undefined) ? undefined : Math.min(...(times as number[]));
    const lastListAt = earliest(parts.map((part) => part.lastListAt));
    const lastEventAt = earliest(parts.map((part) => part.lastEventAt));
    const failing = parts.flatMap((part) => part.failingSince ?? []);
    const lastError = parts.find((part) => part.lastError !== undefined)?.lastError;
    const restarts = Object.fromEntries(
      RESTART_REASONS.map((reason) => [reason, sum(parts.map((part) => part.restarts[reason]))]),
    ) as Record<RestartReason, number>;
    return {
      resource: this.#resource,
      synced: parts.every((part) => part.synced),
      up: parts.every((part) => part.up),
      objects: this.size,
      ...(lastListAt === undefined ? {} : { lastListAt }),
      ...(lastEventAt === undefined ? {} : { lastEventAt }),
      ...(failing.length === 0 ? {} : { failingSince: Math.min(...failing) }),
      ...(lastError === undefined ? {} : { lastError }),
      restarts,
    };
  }

  /** Runs every part until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    this.#started = true;
    await Promise.all(this.#parts.map((part) => part.run(signal)));
  }

  #merged(): Map<string, T> {
    const merged = new Map<string, T>();
    for (const part of [...this.#parts].reverse()) {
      for (const [key, object] of part.entries()) merged.set(key, object);
    }
    return merged;
  }

  /** Tells the handlers how the union's object changed, if it did. */
  #relay(changed: Informer<T>, change: CacheChange<T>): void {
    const copy = (part: Informer<T>, own: T | undefined) =>
      part === changed ? own : part.get(change.key);
    const pick = (own: T | undefined) => {
      for (const part of this.#parts) {
        const object = copy(part, own);
        if (object !== undefined) return object;
      }
      return undefined;
    };
    const old = pick(change.old);
    const object = pick(change.new);
    if (old === object) return;
    // Every handler hears of it; the part that relays logs the first failure.
    const failures: unknown[] = [];
    for (const handler of this.#handlers) {
      try {
        handler({ key: change.key, old, new: object });
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  }
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
