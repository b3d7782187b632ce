/**
 * A full garbage collection of the agent's heap every two minutes.
 *
 * Why: Go's runtime forces a collection when none ran for two minutes
 * (runtime/proc.go, forcegcperiod), so upstream's heap follows its live
 * data. JavaScriptCore (Bun's engine) has no such bound: on a small, steady
 * heap its eden collections keep up while the old generation grows until
 * the heap passes a size proportional to what survived the last full
 * collection, which can take half an hour. Meanwhile RSS follows the
 * garbage, not the live data (measured: a 1 claim/s churn grew the heap
 * 12 → 27 MiB over 17 minutes before one full collection brought it back).
 * A full collection of a heap this size takes a few milliseconds.
 */
import { sleep } from "./sleep.ts";

/** Go's forcegcperiod. */
export const FULL_COLLECTION_PERIOD_MS = 120_000;

/** What one collection took. */
export interface CollectionReport {
  ms: number;
}

export class PeriodicCollection {
  readonly #collect: () => void;
  readonly #periodMs: number;
  readonly #onCollected: (report: CollectionReport) => void;

  constructor(options: {
    /** The runtime's full collection (platform.ts's fullCollection()). */
    collect: () => void;
    periodMs?: number;
    onCollected?: (report: CollectionReport) => void;
  }) {
    this.#collect = options.collect;
    this.#periodMs = options.periodMs ?? FULL_COLLECTION_PERIOD_MS;
    this.#onCollected = options.onCollected ?? (() => {});
  }

  /** Collects every period until `signal` aborts; resolves then. */
  async run(signal: AbortSignal): Promise<void> {
    while (await sleep(this.#periodMs, signal)) this.collect();
  }

  /** One full collection now. */
  collect(): void {
    const started = performance.now();
    this.#collect();
    this.#onCollected({ ms: performance.now() - started });
  }
}
