/**
 * Claims whose data source this node does not hold, remembered for a while
 * (the slow retry): when the scheduler selects this node for such a claim
 * again within that time, it goes straight back to the scheduler with the
 * same Warning, without reading the source again or calling CreateVolume.
 */
import type { Problem } from "./outcome.ts";

export class SourceMisses {
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { problem: Problem; until: number }>();

  constructor(options: { retentionMs: number; now?: () => number }) {
    this.#retentionMs = options.retentionMs;
    this.#now = options.now ?? Date.now;
  }

  /** Remembers the claim's miss (and forgets expired ones, so the map stays small). */
  remember(claimUid: string, problem: Problem): void {
    const now = this.#now();
    for (const [uid, entry] of this.#entries) if (entry.until <= now) this.#entries.delete(uid);
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
