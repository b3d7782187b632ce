/**
 * client-go's workqueue_* metrics (k8s.io/component-base's workqueue
 * provider) on a prom-client Registry: same names, help, buckets and `name`
 * label, so upstream dashboards keep working.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { realClock } from "./clock.ts";
import type { QueueMetricsSink } from "./queue_metrics.ts";

/** prometheus.ExponentialBuckets(10e-9, 10, 10): 10 ns up to 10 s. */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = Array.from(
  { length: 10 },
  (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)),
);

/** Hands out one sink per queue; all share the registry's metric families. */
export interface WorkQueueMetrics {
  /** The sink for the queue called `name` (upstream: claims, volumes, unsavedpvs, csistoragecapacity). */
  forQueue(name: string): QueueMetricsSink;
}

type NameLabel = "name";

/** Age of the work in progress of one queue, in seconds. */
interface UnfinishedWork {
  totalSeconds: number;
  longestSeconds: number;
}

interface Families {
  depth: Gauge<NameLabel>;
  adds: Counter<NameLabel>;
  queueDuration: Histogram<NameLabel>;
  workDuration: Histogram<NameLabel>;
  retries: Counter<NameLabel>;
}

/** Per-queue timing state, the Go side's addTimes and processingStartTimes. */
class QueueTracker implements QueueMetricsSink {
  readonly name: string;
  readonly #families: Families;
  readonly #now: () => number;
  readonly #labels: { name: string };
  readonly #addedAt = new Map<string, number>();
  readonly #startedAt = new Map<string, number>();

  constructor(name: string, options: { families: Families; now: () => number }) {
    this.name = name;
    this.#families = options.families;
    this.#now = options.now;
    this.#labels = { name };
  }

  add(key: string): void {
    this.#families.adds.inc(this.#labels);
    this.#families.depth.inc(this.#labels);
    if (!this.#addedAt.has(key)) this.#addedAt.set(key, this.#now());
  }

  get(key: string): void {
    this.#families.depth.dec(this.#labels);
    this.#startedAt.set(key, this.#now());
    const addedAt = this.#addedAt.get(key);
    if (addedAt === undefined) return;
    this.#families.queueDuration.observe(this.#labels, this.#secondsSince(addedAt));
    this.#addedAt.delete(key);
  }

  done(key: string): void {
    const startedAt = this.#startedAt.get(key);
    if (startedAt === undefined) return;
    this.#families.workDuration.observe(this.#labels, this.#secondsSince(startedAt));
    this.#startedAt.delete(key);
  }

  retry(): void {
    this.#families.retries.inc(this.#labels);
  }

  /** Total and longest age of the work in progress, in seconds. */
  unfinishedWork(): UnfinishedWork {
    let totalSeconds = 0;
    let longestSeconds = 0;
    for (const startedAt of this.#startedAt.values()) {
      const age = this.#secondsSince(startedAt);
      totalSeconds += age;
      longestSeconds = Math.max(longestSeconds, age);
    }
    return { totalSeconds, longestSeconds };
  }

  #secondsSince(ms: number): number {
    return (this.#now() - ms) / 1000;
  }
}

/**
 * Registers the workqueue_* families on `registry` (once per registry:
 * prom-client refuses a second registration of the same name). `now` is the
 * clock the intervals are measured with, in milliseconds.
 */
export function createWorkQueueMetrics(
  registry: Registry,
  options: { now?: () => number } = {},
): WorkQueueMetrics {
  const now = options.now ?? realClock.now;
  const trackers: QueueTracker[] = [];
  const families = createFamilies(registry);
  registerInProgressGauges(registry, trackers);
  return {
    forQueue(name) {
      const tracker = new QueueTracker(name, { families, now });
      trackers.push(tracker);
      // As the Go provider's WithLabelValues: every series exists from the start, at zero.
      const labels = { name };
      families.depth.inc(labels, 0);
      families.adds.inc(labels, 0);
      families.retries.inc(labels, 0);
      families.queueDuration.zero(labels);
      families.workDuration.zero(labels);
      return tracker;
    },
  };
}

function createFamilies(registry: Registry): Families {
  const common = { labelNames: ["name"] as const, registers: [registry] };
  const buckets = [...WORKQUEUE_DURATION_BUCKETS];
  return {
    depth: new Gauge({ ...common, name: "workqueue_depth", help: "Current depth of workqueue" }),
    adds: new Counter({
      ...common,
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
    }),
    queueDuration: new Histogram({
      ...common,
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested.",
      buckets,
    }),
    workDuration: new Histogram({
      ...common,
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes.",
      buckets,
    }),
    retries: new Counter({
      ...common,
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
    }),
  };
}

/**
 * The Go side refreshes these every 500 ms from a goroutine; computing them
 * when scraped needs no timer and is never stale.
 */
function registerInProgressGauges(registry: Registry, trackers: readonly QueueTracker[]): void {
  const gauge = (
    spec: { name: string; help: string; pick: (work: UnfinishedWork) => number },
  ) =>
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: ["name"] as const,
      registers: [registry],
      collect(this: Gauge<NameLabel>) {
        for (const [name, work] of unfinishedByName(trackers)) this.set({ name }, spec.pick(work));
      },
    });
  gauge({
    name: "workqueue_unfinished_work_seconds",
    help: "How many seconds of work has done that is in progress and hasn't been observed by " +
      "work_duration. Large values indicate stuck threads. One can deduce the number of stuck " +
      "threads by observing the rate at which this increases.",
    pick: (work) => work.totalSeconds,
  });
  gauge({
    name: "workqueue_longest_running_processor_seconds",
    help: "How many seconds has the longest running processor for workqueue been running.",
    pick: (work) => work.longestSeconds,
  });
}

/** Two queues under one name add up, as their series would in Go. */
function unfinishedByName(trackers: readonly QueueTracker[]): Map<string, UnfinishedWork> {
  const byName = new Map<string, UnfinishedWork>();
  for (const tracker of trackers) {
    const work = tracker.unfinishedWork();
    const sum = byName.get(tracker.name) ?? { totalSeconds: 0, longestSeconds: 0 };
    byName.set(tracker.name, {
      totalSeconds: sum.totalSeconds + work.totalSeconds,
      longestSeconds: Math.max(sum.longestSeconds, work.longestSeconds),
    });
  }
  return byName;
}
