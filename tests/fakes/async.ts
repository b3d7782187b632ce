/** Helpers for unit tests of asynchronous code: observing promises, running background loops. */
import { waitFor } from "../cluster/wait.ts";

/** What peek() returns for a promise that has not settled yet. */
export const PENDING: unique symbol = Symbol("pending");

/** The value of `promise` if it already settled, else PENDING. */
export function peek<T>(promise: Promise<T>): Promise<T | typeof PENDING> {
  // An already settled promise wins the race: its reaction is queued first.
  return Promise.race([promise, Promise.resolve(PENDING)]);
}

/** Lets pending promise reactions and zero-delay macrotasks run, until `condition` holds. */
export async function eventually(condition: () => boolean, what: string): Promise<void> {
  for (let round = 0; round < 200; round++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  throw new Error(`never happened: ${what}`);
}

/** A promise with its resolve function, for handlers the test releases by hand. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Gives started work a few turns of the event loop to run. */
export async function flush(rounds = 3): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

/**
 * Runs a background loop (anything with run(signal)) until `done()` holds,
 * then aborts it and waits for run() to return; fails if `done()` does not
 * hold within 10 s, rather than hanging the test run.
 */
export async function runUntil(
  loop: { run(signal: AbortSignal): Promise<void> },
  done: () => boolean,
): Promise<void> {
  const stop = new AbortController();
  const running = loop.run(stop.signal);
  try {
    await waitFor(done, { description: "the loop's condition", timeoutMs: 10_000, intervalMs: 2 });
  } finally {
    stop.abort();
    await running;
  }
}

/** An AbortController whose signal counts the listeners added to it. */
export function countedSignal(): { controller: AbortController; listeners: () => number } {
  const controller = new AbortController();
  const signal = controller.signal;
  let added = 0;
  const add = signal.addEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<AbortSignal["addEventListener"]>) => {
    added++;
    add(...args);
  };
  return { controller, listeners: () => added };
}
