/**
 * The "infeasible" slow set (upstream v6.0.0, #1369): after CreateVolume
 * answered InvalidArgument, the same claim with the same StorageClass is not
 * tried again for a while, because the driver would answer the same. A new
 * class (different UID) clears the entry at once.
 *
 * Upstream's set only shrinks when a claim is looked at again, so claims
 * deleted meanwhile stay forever. Here expired entries are dropped on every
 * add, and the set holds at most `limit` claims: past it the oldest entry
 * goes, which only lets that claim be retried before its five minutes.
 */
import { BoundedMap, type BoundObserver } from "../queue/bounded.ts";

interface Entry {
  classUid: string;
  until: number;
}

/** The most claims the set remembers: far more than one node provisions in five minutes. */
export const SLOW_SET_LIMIT = 10_000;

/** Claims (by UID) to retry slowly. */
export class SlowSet {
  readonly #entries: BoundedMap<string, Entry>;
  readonly #retentionMs: number;
  readonly #now: () => number;

  constructor(
    options: { retentionMs: number; now?: () => number; limit?: number; observer?: BoundObserver },
  ) {
    this.#retentionMs = options.retentionMs;
    this.#now = options.now ?? Date.now;
    this.#entries = new BoundedMap(options.limit ?? SLOW_SET_LIMIT, options.observer);
  }

  get size(): number {
    return this.#entries.size;
  }

  add(claimUid: string, classUid: string): void {
    const now = this.#now();
    // Every entry lives as long, so the oldest expire first.
    this.#entries.dropOldestWhile((_uid, entry) => entry.until <= now);
    this.#entries.set(claimUid, { classUid, until: now + this.#retentionMs });
  }

  /** Milliseconds to wait before the next attempt; 0 when the claim may be tried now. */
  remainingMs(claimUid: string, classUid: string): number {
    const entry = this.#entries.get(claimUid);
    if (entry === undefined) return 0;
    const remaining = entry.until - this.#now();
    if (entry.classUid !== classUid || remaining <= 0) {
      this.#entries.delete(claimUid);
      return 0;
    }
    return remaining;
  }

  forget(claimUid: string): void {
    this.#entries.delete(claimUid);
  }
}
