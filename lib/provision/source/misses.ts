/**
 * Claims whose data source this node does not hold, remembered for a while
 * (the slow retry): when the scheduler selects this node for such a claim
 * again within that time, it goes straight back to the scheduler with the
 * same Warning, without reading the source again or calling CreateVolume.
 * At most `limit` claims are remembered: past it the oldest goes, which only
 * lets that claim read its source again before its time.
 */
import type { BoundObserver } from "../../queue/bounded.ts";
import { ExpiringMap } from "../../queue/expiring_map.ts";
import type { Problem } from "../outcome.ts";

/** The most claims remembered: far more than one node is asked for in five minutes. */
export const SOURCE_MISSES_LIMIT = 10_000;

export class SourceMisses {
  readonly #entries: ExpiringMap<string, Problem>;

  constructor(
    options: { retentionMs: number; now?: () => number; limit?: number; observer?: BoundObserver },
  ) {
    this.#entries = new ExpiringMap({ ...options, limit: options.limit ?? SOURCE_MISSES_LIMIT });
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Remembers the claim's miss. */
  remember(claimUid: string, problem: Problem): void {
    this.#entries.set(claimUid, problem);
  }

  /** The remembered miss, while it lasts. */
  recall(claimUid: string): Problem | undefined {
    return this.#entries.get(claimUid)?.value;
  }
}
