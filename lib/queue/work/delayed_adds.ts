/**
 * The waiting room of client-go's delaying queue: keys to add later, at most
 * one entry per key (the earliest time wins), and a single timer armed for the
 * earliest entry.
 */
import type { Clock } from "../clock.ts";

interface Entry {
  key: string;
  readyAt: number;
  /** Arrival order, so keys ready at the same time are added in the order they were scheduled. */
  seq: number;
}

function before(a: Entry, b: Entry): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
}

/** Keys waiting to be added; `onReady` receives each once its time has come. */
export class DelayedAdds {
  readonly #clock: Clock;
  readonly #onReady: (key: string) => void;
  /** The authoritative time per key; heap entries that disagree are stale and skipped. */
  readonly #readyAt = new Map<string, number>();
  readonly #heap: Entry[] = [];
  #seq = 0;
  #timer: { deadline: number; cancel: () => void } | undefined;

  constructor(clock: Clock, onReady: (key: string) => void) {
    this.#clock = clock;
    this.#onReady = onReady;
  }

  /** Keys waiting. */
  get size(): number {
    return this.#readyAt.size;
  }

  /** Adds `key` after `ms`, unless it is already waiting for an earlier time. */
  schedule(key: string, ms: number): void {
    const readyAt = this.#clock.now() + ms;
    const waiting = this.#readyAt.get(key);
    if (waiting !== undefined && waiting <= readyAt) return;
    this.#readyAt.set(key, readyAt);
    this.#push({ key, readyAt, seq: this.#seq++ });
    this.#arm();
  }

  /** Drops every waiting key and cancels the timer. */
  clear(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#readyAt.clear();
    this.#heap.length = 0;
  }

  #fire(): void {
    this.#timer = undefined;
    const now = this.#clock.now();
    const ready: string[] = [];
    for (let top = this.#liveTop(); top && top.readyAt <= now; top = this.#liveTop()) {
      this.#pop();
      this.#readyAt.delete(top.key);
      ready.push(top.key);
    }
    // State is up to date before calling out, so onReady may schedule again.
    for (const key of ready) this.#onReady(key);
    this.#arm();
  }

  #arm(): void {
    const top = this.#liveTop();
    if (this.#timer && this.#timer.deadline === top?.readyAt) return;
    this.#timer?.cancel();
    this.#timer = undefined;
    if (!top) return;
    const delayMs = Math.max(0, top.readyAt - this.#clock.now());
    const cancel = this.#clock.schedule(() => this.#fire(), delayMs);
    this.#timer = { deadline: top.readyAt, cancel };
  }

  #liveTop(): Entry | undefined {
    for (let top = this.#heap[0]; top; top = this.#heap[0]) {
      if (this.#readyAt.get(top.key) === top.readyAt) return top;
      this.#pop();
    }
    return undefined;
  }

  #push(entry: Entry): void {
    const heap = this.#heap;
    heap.push(entry);
    for (let i = heap.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!before(entry, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      heap[parent] = entry;
      i = parent;
    }
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop();
    if (!last || heap.length === 0) return;
    heap[0] = last;
    for (let i = 0;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }
}
