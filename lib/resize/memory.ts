/**
 * What external-resizer keeps only in memory about a claim: whether its last
 * ControllerExpandVolume ended with a final error (finalErrorPVCs), and when
 * an infeasible size entered the slow set, which holds back a retry of the
 * same size for --retry-interval-max (csi-lib-utils slowset).
 */
export class ResizeMemory {
  readonly #finalErrors = new Set<string>();
  readonly #slow = new Map<string, number>();
  readonly #retentionMs: number;
  readonly #now: () => number;

  constructor(options: { retentionMs: number; now?: () => number }) {
    this.#retentionMs = options.retentionMs;
    this.#now = options.now ?? Date.now;
  }

  hasFinalError(key: string): boolean {
    return this.#finalErrors.has(key);
  }

  setFinalError(key: string, final: boolean): void {
    if (final) this.#finalErrors.add(key);
    else this.#finalErrors.delete(key);
  }

  /** Puts the key in the slow set unless it is there already. */
  addSlow(key: string): void {
    if (!this.#slow.has(key)) this.#slow.set(key, this.#now());
  }

  removeSlow(key: string): void {
    this.#slow.delete(key);
  }

  /** The wait left while the key is in the slow set; undefined when it is not (or no longer). */
  slowRemainingMs(key: string): number | undefined {
    const since = this.#slow.get(key);
    if (since === undefined) return undefined;
    const left = this.#retentionMs - (this.#now() - since);
    if (left > 0) return left;
    this.#slow.delete(key);
    return undefined;
  }

  /** Forgets a claim that is gone. */
  forget(key: string): void {
    this.#finalErrors.delete(key);
    this.#slow.delete(key);
  }
}
