/**
 * Deterministic time for tests of anything that takes a Clock: time only
 * moves when the test calls advance(), and timers fire in deadline order.
 */
import type { Clock } from "../../lib/queue/clock.ts";

interface FakeTimer {
  id: number;
  deadline: number;
  callback: () => void;
}

/** A Clock whose time the test moves by hand. */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 0;
  #timers = new Map<number, FakeTimer>();

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  schedule(callback: () => void, ms: number): () => void {
    const id = this.#nextId++;
    this.#timers.set(id, { id, deadline: this.#now + Math.max(0, ms), callback });
    return () => this.#timers.delete(id);
  }

  /** Timers armed and neither fired nor cancelled: a leak check after shutdown. */
  pendingTimers(): number {
    return this.#timers.size;
  }

  /**
   * Moves time forward by `ms`, firing each due timer at its own deadline so
   * that callbacks which read now() or arm new timers see consistent time.
   */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (let timer = this.#earliestDue(target); timer; timer = this.#earliestDue(target)) {
      this.#timers.delete(timer.id);
      this.#now = Math.max(this.#now, timer.deadline);
      timer.callback();
    }
    this.#now = target;
  }

  #earliestDue(target: number): FakeTimer | undefined {
    let earliest: FakeTimer | undefined;
    for (const timer of this.#timers.values()) {
      if (timer.deadline > target) continue;
      // Ties fire in arming order, as real timers do.
      if (!earliest || timer.deadline < earliest.deadline) earliest = timer;
    }
    return earliest;
  }
}
