/**
 * What a work queue reports, as client-go's queueMetrics/retryMetrics: the
 * queue calls these hooks and knows nothing of Prometheus.
 */

/** Hooks a WorkQueue calls; implementations time the intervals themselves. */
export interface QueueMetricsSink {
  /** A key entered the queue (a duplicate add of a waiting key is not reported). */
  add(key: string): void;
  /** A worker took the key. */
  get(key: string): void;
  /** The worker finished the key. */
  done(key: string): void;
  /** A delayed (retry) add was requested. */
  retry(): void;
}

/** The default sink: reports nothing. */
export const noQueueMetrics: QueueMetricsSink = {
  add: () => {},
  get: () => {},
  done: () => {},
  retry: () => {},
};
