/**
 * A full garbage collection of the agent's heap every two minutes, and
 * every third one a shrink of the whole footprint.
 *
 * Why collect: Go's runtime forces a collection when none ran for two
 * minutes (runtime/proc.go, forcegcperiod), so upstream's heap follows its
 * live data. JavaScriptCore (Bun's engine) has no such bound: on a small,
 * steady heap its eden collections keep up while the old generation grows
 * until the heap passes a size proportional to what survived the last full
 * collection, which can take half an hour. Meanwhile RSS follows the
 * garbage, not the live data (measured: a 1 claim/s churn grew the heap
 * 12 → 27 MiB over 17 minutes before one full collection brought it back).
 * A full collection takes tens of milliseconds (measured: 53 and 23 ms in
 * an agent holding 250 and 500 claims of its node, on a busy 2-core
 * machine), so once in 2 minutes costs under 0.05% of a core, and the pause
 * is far below anything liveness would notice.
 *
 * Why shrink: with the heap flat, RSS still crept up under that churn
 * (6.3% over 30 minutes, 13.7 MiB/h) in two places a collection does not
 * reach: JIT-compiled code (3.4 → 4.1 MiB) and the native allocator's
 * pages. A shrink (Bun.shrink(), JavaScriptCore's
 * VM::shrinkFootprintWhenIdle in runtime/VM.cpp) also discards compiled code
 * and hands the allocator's free pages back to the kernel. Measured side by
 * side on one cluster (4 agents, 1 claim/s each for 30 minutes, 10k/10k in
 * the background): RSS drift 2.3% with collections alone, 0.3% shrinking
 * every 2 minutes, −0.3% every 6 and −2.6% every 10; CPU over the 30
 * minutes 28.0, 36.5, 31.3 and 30.1 s, since the discarded code is compiled
 * again. Every 6 minutes keeps the line flat for about a tenth more CPU
 * under constant churn; on an idle node the cost did not show (14 minutes
 * idle: 1.04 s of CPU, shrinks included, against upstream's 1.38 s).
 */
import { sleep } from "./sleep.ts";

/** Go's forcegcperiod. */
export const FULL_COLLECTION_PERIOD_MS = 120_000;

/** Every how many collections one is a shrink: every 6 minutes. */
export const SHRINK_EVERY = 3;

/** What one collection took, and whether it shrank the footprint. */
export interface CollectionReport {
  ms: number;
  kind: "collection" | "shrink";
}

export class PeriodicCollection {
  readonly #collect: () => void;
  readonly #shrink: (() => void) | undefined;
  readonly #shrinkEvery: number;
  readonly #periodMs: number;
  readonly #onCollected: (report: CollectionReport) => void;
  #count = 0;

  constructor(options: {
    /** The runtime's full collection (platform.ts's fullCollection()). */
    collect: () => void;
    /** The runtime's footprint shrink (platform.ts's footprintShrink()), if it has one. */
    shrink?: (() => void) | undefined;
    shrinkEvery?: number;
    periodMs?: number;
    onCollected?: (report: CollectionReport) => void;
  }) {
    this.#collect = options.collect;
    this.#shrink = options.shrink;
    this.#shrinkEvery = options.shrinkEvery ?? SHRINK_EVERY;
    this.#periodMs = options.periodMs ?? FULL_COLLECTION_PERIOD_MS;
    this.#onCollected = options.onCollected ?? (() => {});
  }

  /** Collects every period until `signal` aborts; resolves then. */
  async run(signal: AbortSignal): Promise<void> {
    while (await sleep(this.#periodMs, signal)) this.#collectNow();
  }

  #collectNow(): void {
    this.#count++;
    const shrink = this.#count % this.#shrinkEvery === 0 ? this.#shrink : undefined;
    const started = performance.now();
    (shrink ?? this.#collect)();
    const ms = performance.now() - started;
    this.#onCollected({ ms, kind: shrink === undefined ? "collection" : "shrink" });
  }
}
