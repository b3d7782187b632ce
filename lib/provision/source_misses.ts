/**
 * Claims whose data source this node does not hold, remembered for a while
 * (the slow retry): when the scheduler selects this node for such a claim
 * again within that time, it goes straight back to the scheduler with the
 * same Warning, without reading the source again or calling CreateVolume.
 * At most `limit` claims are remembered: past it the oldest goes, which only
 * lets that claim read its source again before its time.
 */
import { BoundedMap, type BoundObserver } from "../queue/bounded.ts";
import type { Problem } from "./outcome.ts";

/** The most claims remembered: far more than one node is asked for in five minutes. */
export const SOURCE_MISSES_LIMIT = 10_000;

export class SourceMisses {
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #entries: BoundedMap<string, { problem: Problem; until: number }>;

  constructor(
    options: { retentionMs: number; now?: () => number; limit?: number; observer?: BoundObserver },
  ) {
    this.#retentionMs = options.retentionMs;
    this.#now = options.now ?? Date.now;
    this.#entries = new BoundedMap(options.limit ?? SOURCE_MISSES_LIMIT, options.observer);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Remembers the claim's miss (and forgets expired ones, so the map stays small). */
  remember(claimUid: string, problem: Problem): void {
    const now = this.#now();
    // Every entry lives as long, so the oldest expire first.
    this.#entries.dropOldestWhile((_uid, entry) => entry.until <= now);
    this.#entries.set(claimUid, { problem, until: now + this.#retentionMs });
  }

  /** The remembered miss, while it lasts. */
  recall(claimUid: string): Problem | undefined {
    const entry = this.#entries.get(claimUid);
    if (entry === undefined) return undefined;
    if (entry.until > this.#now()) return entry.problem;
    this.#entries.delete(claimUid);
    return undefined;
  }
}
