/**
 * The "infeasible" slow set (upstream v6.0.0, #1369): after CreateVolume
 * answered InvalidArgument, the same claim with the same StorageClass is not
 * tried again for a while, because the driver would answer the same. A new
 * class (different UID) clears the entry at once.
 */

interface Entry {
  classUid: string;
  until: number;
}

/** Claims (by UID) to retry slowly. */
export class SlowSet {
  readonly #entries = new Map<string, Entry>();
  readonly #retentionMs: number;
  readonly #now: () => number;

  constructor(options: { retentionMs: number; now?: () => number }) {
    this.#retentionMs = options.retentionMs;
    this.#now = options.now ?? Date.now;
  }

  add(claimUid: string, classUid: string): void {
    this.#entries.set(claimUid, { classUid, until: this.#now() + this.#retentionMs });
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
