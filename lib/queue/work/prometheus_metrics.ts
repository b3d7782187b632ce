/**
 * client-go's workqueue_* metrics (k8s.io/component-base's workqueue
 * provider) on a prom-client Registry: same names, help, buckets and `name`
 * label, so upstream dashboards keep working.
 *
 * Every key added, taken and finished updates these, several times per
 * claim, so the depth and the add and retry counts are kept in plain numbers
 * per queue name and handed to prom-client only when the registry is scraped,
 * instead of validating and hashing a labels object on every update. The two
 * duration histograms are prom-client's own.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { realClock } from "../clock.ts";
import type { QueueMetricsSink } from "./metrics.ts";

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

/** One queue name's series of a histogram. */
interface DurationSeries {
  observe(seconds: number): void;
}

/** Age of the work in progress of one queue, in seconds. */
interface UnfinishedWork {
  totalSeconds: number;
  longestSeconds: number;
}

/** One queue name's figures; queues that share a name add up, as their series would in Go. */
interface QueueFigures {
  depth: number;
  adds: number;
  retries: number;
  queueDuration: DurationSeries;
  workDuration: DurationSeries;
}

interface Families {
  queueDuration: Histogram<NameLabel>;
  workDuration: Histogram<NameLabel>;
  /** By queue name, in the order the names were first used. */
  figures: Map<string, QueueFigures>;
}

/** Per-queue timing state, the Go side's addTimes and processingStartTimes. */
class QueueTracker implements QueueMetricsSink {
  readonly name: string;
  readonly #figures: QueueFigures;
  readonly #now: () => number;
  readonly #addedAt = new Map<string, number>();
  readonly #startedAt = new Map<string, number>();

  constructor(name: string, options: { figures: QueueFigures; now: () => number }) {
    this.name = name;
    this.#figures = options.figures;
    this.#now = options.now;
  }

  add(key: string): void {
    this.#figures.adds++;
    this.#figures.depth++;
    if (!this.#addedAt.has(key)) this.#addedAt.set(key, this.#now());
  }

  get(key: string): void {
    this.#figures.depth--;
    this.#startedAt.set(key, this.#now());
    const addedAt = this.#addedAt.get(key);
    if (addedAt === undefined) return;
    this.#figures.queueDuration.observe(this.#secondsSince(addedAt));
    this.#addedAt.delete(key);
  }

  done(key: string): void {
    const startedAt = this.#startedAt.get(key);
    if (startedAt === undefined) return;
    this.#figures.workDuration.observe(this.#secondsSince(startedAt));
    this.#startedAt.delete(key);
  }

  retry(): void {
    this.#figures.retries++;
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
      // As the Go provider's WithLabelValues: every series exists from the start, at zero.
      const figures = families.figures.get(name) ?? {
        depth: 0,
        adds: 0,
        retries: 0,
        queueDuration: seriesFrom(families.queueDuration, name),
        workDuration: seriesFrom(families.workDuration, name),
      };
      families.figures.set(name, figures);
      const tracker = new QueueTracker(name, { figures, now });
      trackers.push(tracker);
      return tracker;
    },
  };
}

/** The series of queue `name`, exposed at zero from the start (as Go's WithLabelValues). */
function seriesFrom(histogram: Histogram<NameLabel>, name: string): DurationSeries {
  histogram.zero({ name });
  return histogram.labels({ name });
}

function createFamilies(registry: Registry): Families {
  const figures = new Map<string, QueueFigures>();
  const common = { labelNames: ["name"] as const, registers: [registry] };
  const histogram = { ...common, buckets: [...WORKQUEUE_DURATION_BUCKETS] };
  new Gauge({
    ...common,
    name: "workqueue_depth",
    help: "Current depth of workqueue",
    collect(this: Gauge<NameLabel>) {
      for (const [name, figure] of figures) this.set({ name }, figure.depth);
    },
  });
  countedOnScrape(figures, {
    ...common,
    name: "workqueue_adds_total",
    help: "Total number of adds handled by workqueue",
    pick: (figure) => figure.adds,
  });
  countedOnScrape(figures, {
    ...common,
    name: "workqueue_retries_total",
    help: "Total number of retries handled by workqueue",
    pick: (figure) => figure.retries,
  });
  return {
    figures,
    queueDuration: new Histogram({
      ...histogram,
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested.",
    }),
    workDuration: new Histogram({
      ...histogram,
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes.",
    }),
  };
}

/** A counter brought up to the queues' own count when scraped. */
function countedOnScrape(
  figures: ReadonlyMap<string, QueueFigures>,
  spec: {
    name: string;
    help: string;
    labelNames: readonly NameLabel[];
    registers: Registry[];
    pick: (figure: QueueFigures) => number;
  },
): void {
  const reported = new Map<string, number>();
  const { pick, ...config } = spec;
  new Counter({
    ...config,
    collect(this: Counter<NameLabel>) {
      for (const [name, figure] of figures) {
        const count = pick(figure);
        this.inc({ name }, count - (reported.get(name) ?? 0));
        reported.set(name, count);
      }
    },
  });
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
