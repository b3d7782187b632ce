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
 * A full collection takes tens of milliseconds (measured: 53 and 23 ms in
 * an agent holding 250 and 500 claims of its node, on a busy 2-core
 * machine), so once in 2 minutes costs under 0.05% of a core, and the pause
 * is far below anything liveness would notice.
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
    while (await sleep(this.#periodMs, signal)) this.#collectNow();
  }

  #collectNow(): void {
    const started = performance.now();
    this.#collect();
    this.#onCollected({ ms: performance.now() - started });
  }
}
