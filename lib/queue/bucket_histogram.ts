/**
 * A prom-client Histogram whose series are counted in plain arrays. The work
 * queues observe two durations per key, and prom-client's observe() converts,
 * validates and hashes its labels object on every call. Here a series is
 * looked up once, observe() is a bucket search and three additions, and the
 * exposition is built when the registry is scraped, in the shape
 * prom-client's own Histogram produces (bucket_histogram_test.ts compares the
 * two on the same observations).
 */
import {
  Histogram,
  type MetricObjectWithValues,
  type MetricValueWithName,
  type Registry,
} from "prom-client";

/** One series: counts per bucket (the last for values above every bound), sum and count. */
export class BucketSeries {
  readonly #upperBounds: readonly number[];
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(upperBounds: readonly number[]) {
    this.#upperBounds = upperBounds;
    this.counts = new Array<number>(upperBounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const bounds = this.#upperBounds;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
    this.counts[bucket]!++;
    this.sum += value;
    this.count++;
  }
}

/** A value as prom-client's Histogram exports it: the series' labels apart from `le`. */
interface Value {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string>;
  value: number;
  metricName: string;
}

type Exported<V> =
  & Omit<
    MetricObjectWithValues<MetricValueWithName<string>>,
    "values" | "collect"
  >
  & {
    values: V[];
  };

/** A histogram with one label; its series are kept by that label's value. */
export class BucketHistogram<L extends string> extends Histogram<L> {
  readonly #name: string;
  readonly #help: string;
  readonly #label: L;
  readonly #bounds: readonly number[];
  readonly #series = new Map<string, BucketSeries>();

  constructor(
    config: {
      name: string;
      help: string;
      label: L;
      buckets: readonly number[];
      registry: Registry;
    },
  ) {
    super({
      name: config.name,
      help: config.help,
      labelNames: [config.label],
      buckets: [...config.buckets],
      registers: [config.registry],
    });
    this.#name = config.name;
    this.#help = config.help;
    this.#label = config.label;
    this.#bounds = [...config.buckets];
  }

  /** The series of this label value, created at zero (as Go's WithLabelValues). */
  series(labelValue: string): BucketSeries {
    let series = this.#series.get(labelValue);
    if (series === undefined) {
      series = new BucketSeries(this.#bounds);
      this.#series.set(labelValue, series);
    }
    return series;
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    const data = await this.getForPromString();
    const values = data.values.map(({ sharedLabels, labels, value, metricName }) => ({
      labels: { ...labels, ...sharedLabels },
      value,
      metricName,
    }));
    return { ...data, values } as MetricObjectWithValues<MetricValueWithName<L>>;
  }

  /** What prom-client's Registry prints (it prefers this to get()). */
  getForPromString(): Promise<Exported<Value>> {
    const values: Value[] = [];
    const bucket = `${this.#name}_bucket`;
    for (const [labelValue, series] of this.#series) {
      const sharedLabels = { [this.#label]: labelValue };
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += series.counts[i]!;
        values.push({ labels: { le }, sharedLabels, value: cumulative, metricName: bucket });
      });
      values.push(
        { labels: { le: "+Inf" }, sharedLabels, value: series.count, metricName: bucket },
        { labels: {}, sharedLabels, value: series.sum, metricName: `${this.#name}_sum` },
        { labels: {}, sharedLabels, value: series.count, metricName: `${this.#name}_count` },
      );
    }
    // prom-client's typings declare `type` as an enum; at run time it is the string it prints.
    const type = "histogram" as unknown as Exported<Value>["type"];
    return Promise.resolve({
      name: this.#name,
      help: this.#help,
      type,
      values,
      aggregator: "sum",
    });
  }

  override reset(): void {
    // prom-client's constructor calls reset() before this class's fields exist.
    if (!(#series in this)) return;
    for (const series of this.#series.values()) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}
