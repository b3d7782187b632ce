/**
 * The "infeasible" slow set (as upstream's since v6.0.0): after CreateVolume
 * answered InvalidArgument, the same claim with the same StorageClass is not
 * tried again for a while, because the driver would answer the same. A new
 * class (different UID) clears the entry at once.
 *
 * Upstream's set only shrinks when a claim is looked at again, so claims
 * deleted meanwhile stay forever. Here expired entries are dropped on every
 * add, and the set holds at most `limit` claims: past it the oldest entry
 * goes, which only lets that claim be retried before its five minutes.
 */
import type { BoundObserver } from "../queue/bounded.ts";
import { ExpiringMap } from "../queue/expiring_map.ts";

/** The most claims the set remembers: far more than one node provisions in five minutes. */
export const SLOW_SET_LIMIT = 10_000;

/** Claims (by UID) to retry slowly, each with the StorageClass UID it failed with. */
export class SlowSet {
  readonly #entries: ExpiringMap<string, string>;

  constructor(
    options: { retentionMs: number; now?: () => number; limit?: number; observer?: BoundObserver },
  ) {
    this.#entries = new ExpiringMap({ ...options, limit: options.limit ?? SLOW_SET_LIMIT });
  }

  get size(): number {
    return this.#entries.size;
  }

  add(claimUid: string, classUid: string): void {
    this.#entries.set(claimUid, classUid);
  }

  /** Milliseconds to wait before the next attempt; 0 when the claim may be tried now. */
  remainingMs(claimUid: string, classUid: string): number {
    const entry = this.#entries.get(claimUid);
    if (entry === undefined) return 0;
    if (entry.value === classUid) return entry.remainingMs;
    this.#entries.delete(claimUid);
    return 0;
  }

  forget(claimUid: string): void {
    this.#entries.delete(claimUid);
  }
}
