/**
 * A full garbage collection of the agent's heap once two minutes have passed
 * without one, every third of those a shrink of the whole footprint, and one
 * whenever the heap has doubled since the last full collection.
 *
 * Why collect: Go's runtime forces a collection when none ran for two
 * minutes (runtime/proc.go, forcegcperiod), so upstream's heap follows its
 * live data. JavaScriptCore (Bun's engine) has no such bound: on a small,
 * steady heap its old generation can grow for half an hour before a full
 * collection, and RSS follows the garbage instead of the live data. A full
 * collection takes tens of milliseconds, far below anything liveness notices.
 *
 * Why shrink: with the heap flat, RSS still creeps up under churn in two
 * places a collection does not reach, JIT-compiled code and the native
 * allocator's free pages. A shrink (Bun.shrink(), JavaScriptCore's
 * VM::shrinkFootprintWhenIdle) discards both; since discarded code is
 * compiled again, it runs every third collection rather than every one.
 *
 * Why also collect on growth: Go's collector starts a cycle when the heap
 * reaches twice what the last one left live (GOGC=100), which bounds
 * upstream's peak under a burst. JavaScriptCore lets the heap run further,
 * and RSS keeps what the heap once held, so the loop reads the heap's used
 * bytes once a second and collects when they pass twice what the last full
 * collection left, and by more than a floor, so that a small idle heap does
 * not collect at every wake-up. The measurements behind each choice are in
 * bench/README.md.
 */
import { setImmediate } from "node:timers";
import { sleep } from "./sleep.ts";

/** Go's forcegcperiod. */
const FULL_COLLECTION_PERIOD_MS = 120_000;

/** Every how many periodic collections one is a shrink: every 6 minutes. */
const SHRINK_EVERY = 3;

/** How often the heap is read for growth. */
const GROWTH_CHECK_MS = 1_000;

/** Go's GOGC=100: the heap may grow to twice what the last collection left. */
const GROWTH_FACTOR = 2;

/** Below this much growth over the last collection's leftover, no collection on growth. */
const GROWTH_FLOOR_BYTES = 8 * 1024 * 1024;

/** What one collection took, why it ran, and the heap before and after (when read). */
export interface CollectionReport {
  /**
   * From the call to its return; for a shrink, to the event loop's next turn,
   * so that its deferred work counts (with whatever else ran before that turn).
   */
  ms: number;
  /** "collection" and "shrink" are periodic; "growth" ran because the heap doubled. */
  kind: "collection" | "shrink" | "growth";
  heapBeforeBytes?: number | undefined;
  heapAfterBytes?: number | undefined;
}

/**
 * Whether the heap has grown enough since the last full collection to
 * collect again: past `factor` times what it left, and by more than `floorBytes`.
 */
export function grownPastLastCollection(
  heap: { usedBytes: number; leftBytes: number },
  limits: { factor: number; floorBytes: number },
): boolean {
  const { usedBytes, leftBytes } = heap;
  return usedBytes > leftBytes * limits.factor && usedBytes - leftBytes > limits.floorBytes;
}

export class PeriodicCollection {
  readonly #collect: () => void;
  readonly #shrink: (() => void) | undefined;
  readonly #heapUsed: (() => number) | undefined;
  readonly #shrinkEvery: number;
  readonly #periodMs: number;
  readonly #checkMs: number;
  readonly #limits: { factor: number; floorBytes: number };
  readonly #onCollected: (report: CollectionReport) => void;
  #periodic = 0;
  /** What the last full collection left in the heap (bytes). */
  #leftBytes = 0;

  constructor(options: {
    /** The runtime's full collection (platform.ts's fullCollection()). */
    collect: () => void;
    /**
     * The runtime's footprint shrink (platform.ts's footprintShrink()), if it
     * has one: a full collection and more, whose work may run after the call
     * returns, once the calling JavaScript has (Bun's does).
     */
    shrink?: (() => void) | undefined;
    /** The heap's used bytes (platform.ts's heapUsedBytes()); without it, only periodic collections. */
    heapUsed?: (() => number) | undefined;
    shrinkEvery?: number;
    periodMs?: number;
    /** How often the heap is read for growth. */
    checkMs?: number;
    growthFactor?: number;
    growthFloorBytes?: number;
    onCollected?: (report: CollectionReport) => void;
  }) {
    this.#collect = options.collect;
    this.#shrink = options.shrink;
    this.#heapUsed = options.heapUsed;
    this.#shrinkEvery = options.shrinkEvery ?? SHRINK_EVERY;
    this.#periodMs = options.periodMs ?? FULL_COLLECTION_PERIOD_MS;
    // Without a heap reading there is nothing to check between periodic collections.
    const checkMs = options.heapUsed === undefined ? this.#periodMs : options.checkMs;
    this.#checkMs = Math.min(checkMs ?? GROWTH_CHECK_MS, this.#periodMs);
    this.#limits = {
      factor: options.growthFactor ?? GROWTH_FACTOR,
      floorBytes: options.growthFloorBytes ?? GROWTH_FLOOR_BYTES,
    };
    this.#onCollected = options.onCollected ?? (() => {});
  }

  /**
   * Collects when a period has passed since the last full collection of
   * either kind (as Go's forcegc counts from the last cycle), and on growth
   * in between, until `signal` aborts; resolves then.
   */
  async run(signal: AbortSignal): Promise<void> {
    // Until the first collection, the heap at start stands for what one would leave.
    this.#leftBytes = this.#heapUsed?.() ?? 0;
    let sinceCollectionMs = 0;
    while (await sleep(this.#checkMs, signal)) {
      sinceCollectionMs += this.#checkMs;
      if (sinceCollectionMs >= this.#periodMs) {
        sinceCollectionMs = 0;
        await this.#collectPeriodic();
        continue;
      }
      const grownBytes = this.#grownBytes();
      if (grownBytes !== undefined) {
        sinceCollectionMs = 0;
        await this.#timed("growth", this.#collect, { heapBeforeBytes: grownBytes });
      }
    }
  }

  /** The heap's used bytes if they have grown past the last collection's leftover. */
  #grownBytes(): number | undefined {
    const usedBytes = this.#heapUsed?.();
    if (usedBytes === undefined) return undefined;
    const heap = { usedBytes, leftBytes: this.#leftBytes };
    return grownPastLastCollection(heap, this.#limits) ? usedBytes : undefined;
  }

  #collectPeriodic(): Promise<void> {
    this.#periodic++;
    const shrink = this.#periodic % this.#shrinkEvery === 0 ? this.#shrink : undefined;
    if (shrink === undefined) return this.#timed("collection", this.#collect);
    return this.#timed("shrink", shrink, { deferred: true });
  }

  /**
   * Runs one collection and reports it. A deferred one (Bun.shrink()) is
   * timed and read on the event loop's next turn: its work runs once the
   * calling JavaScript returns, so at the call's return neither the time nor
   * the heap would show it.
   */
  async #timed(
    kind: CollectionReport["kind"],
    collect: () => void,
    options: { deferred?: boolean; heapBeforeBytes?: number } = {},
  ): Promise<void> {
    const heapBeforeBytes = options.heapBeforeBytes ?? this.#heapUsed?.();
    const started = performance.now();
    collect();
    if (options.deferred) await nextTurn();
    const ms = performance.now() - started;
    const heapAfterBytes = this.#heapUsed?.();
    if (heapAfterBytes !== undefined) this.#leftBytes = heapAfterBytes;
    this.#onCollected({ ms, kind, heapBeforeBytes, heapAfterBytes });
  }
}

/** Resolves on the event loop's next turn, after the current JavaScript has returned. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
