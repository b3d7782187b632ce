/**
 * The worker loop of sig-storage-lib-external-provisioner's controller: N
 * workers take keys, run the handler and requeue according to the outcome
 * the handler returns. The queue guarantees one handler per key at a time.
 */
import type { WorkQueue } from "./queue.ts";

/** What became of one attempt at a key. */
export type HandleOutcome =
  /** Finished: the failure count is reset. */
  | { kind: "done" }
  /** Failed: retried after the rate limiter's backoff. */
  | { kind: "retry"; error?: unknown }
  /** Not finished: retried after `ms`; failures keep counting. */
  | { kind: "retryAfter"; ms: number }
  /** Run again as soon as a worker is free; failures keep counting. */
  | { kind: "requeue" };

/** Handles one key; `signal` aborts when the pool is stopping. */
export type KeyHandler = (key: string, signal: AbortSignal) => Promise<HandleOutcome>;

/** The subset of a pino logger the pool writes to. */
export interface WorkerLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How the pool runs. */
interface WorkerPoolOptions {
  /** Handlers running at once, at least 1. */
  workers: number;
  handle: KeyHandler;
  /** Stops taking keys; running handlers receive it and are awaited. */
  signal: AbortSignal;
  logger?: WorkerLogger;
}

/**
 * Runs `workers` loops over `queue` until `signal` aborts or the queue is shut
 * down and empty; resolves once every running handler has finished. Outcomes
 * of handlers cut short still requeue their keys: shut the queue down
 * afterwards to drop those retries and their timers.
 */
export async function runWorkers(queue: WorkQueue, options: WorkerPoolOptions): Promise<void> {
  const count = Math.max(1, Math.floor(options.workers));
  await Promise.all(Array.from({ length: count }, () => workerLoop(queue, options)));
}

async function workerLoop(queue: WorkQueue, options: WorkerPoolOptions): Promise<void> {
  while (!options.signal.aborted) {
    const key = await queue.get(options.signal);
    if (key === undefined) return;
    const outcome = await attempt(key, options);
    applyOutcome(queue, { key, outcome, logger: options.logger });
  }
}

/** A handler that throws is a failed attempt, not a dead worker. */
async function attempt(key: string, options: WorkerPoolOptions): Promise<HandleOutcome> {
  try {
    return await options.handle(key, options.signal);
  } catch (error) {
    options.logger?.error({ key, err: error }, "Handler threw; retrying with backoff");
    return { kind: "retry", error };
  }
}

function applyOutcome(
  queue: WorkQueue,
  { key, outcome, logger }: {
    key: string;
    outcome: HandleOutcome;
    logger?: WorkerLogger | undefined;
  },
): void {
  // Requeue before done(), as client-go controllers do: the key is still
  // processing, so the add marks it dirty and done() queues it again.
  switch (outcome.kind) {
    case "done":
      queue.forget(key);
      break;
    case "retry":
      queue.addRateLimited(key);
      logger?.debug(
        { key, err: outcome.error, requeues: queue.numRequeues(key) },
        "Retrying with backoff",
      );
      break;
    case "retryAfter":
      queue.addAfter(key, outcome.ms);
      break;
    case "requeue":
      queue.add(key);
      break;
  }
  queue.done(key);
}
