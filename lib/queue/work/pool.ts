/**
 * A controller's queue and its workers, as every controller of the agent
 * runs them: keys retried with client-go's per-key exponential backoff
 * (--retry-interval-start, --retry-interval-max), and workers that stop
 * taking keys on the soft stop while the calls in flight get until the hard
 * stop.
 */
import type { QueueMetricsSink } from "./metrics.ts";
import { ItemExponentialFailureRateLimiter } from "./rate_limiters.ts";
import { WorkQueue } from "./queue.ts";
import { type KeyHandler, runWorkers, type WorkerLogger } from "./workers.ts";

/** A queue whose failed keys wait base·2^failures, capped. */
export function retryQueue(
  retry: { startMs: number; maxMs: number },
  metrics?: QueueMetricsSink,
): WorkQueue {
  const rateLimiter = new ItemExponentialFailureRateLimiter(retry.startMs, retry.maxMs);
  return new WorkQueue(metrics === undefined ? { rateLimiter } : { rateLimiter, metrics });
}

/** How a pool runs under the agent's two-stage stop. */
interface PoolOptions {
  workers: number;
  handle: KeyHandler;
  /** The soft stop: no new keys. */
  stop: AbortSignal;
  /** The hard stop: handlers in flight are cancelled. */
  halt: AbortSignal;
  logger: WorkerLogger;
  /**
   * The start gate, e.g. every cache the handler reads has listed once
   * (runtime/synced.ts waitForSync); false: stopped before it opened.
   */
  gate?: () => Promise<boolean>;
}

/**
 * Runs the workers, once the start gate opens, until the soft
 * stop; then shuts the queue down (dropping delayed retries).
 */
export async function runPool(queue: WorkQueue, options: PoolOptions): Promise<void> {
  try {
    if (options.gate && !(await options.gate())) return;
    await runWorkers(queue, {
      workers: options.workers,
      signal: options.stop,
      logger: options.logger,
      handle: (key) => options.handle(key, options.halt),
    });
  } finally {
    queue.shutDown();
  }
}
