/**
 * The soak scenario's time series and what is read from them: the RSS trend
 * after warm-up (least-squares slope and drift), min/max/end of a series, and
 * the compact column form kept in the results file and printed as CSV. Pure.
 */

/** One reading of one agent. */
export interface SoakSample {
  /** Seconds since the claim stream started. */
  t: number;
  /** VmRSS, MiB. */
  rssMiB: number;
  /** Of it, anonymous memory (heaps, stacks), MiB, from /proc/<pid>/smaps_rollup. */
  rssAnonMiB: number;
  /** Of it, pages of mapped files (the executable's code and data), MiB. */
  rssFileMiB: number;
  /** Entries of /proc/<pid>/fd. */
  fds: number;
  /** Connections to its CSI driver's socket. */
  csi: number;
  threads: number;
  /** CPU seconds (user + system, all threads) the process has used since it started. */
  cpuS: number;
  /** The gauges of its /metrics that it exposes (e.g. go_goroutines), by name. */
  gauges: Record<string, number>;
}

export interface LinearFit {
  /** y per x. */
  slope: number;
  intercept: number;
}

/** Ordinary least squares y = intercept + slope·x; needs two distinct x. */
export function leastSquares(points: readonly { x: number; y: number }[]): LinearFit {
  const n = points.length;
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / n;
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const { x, y } of points) {
    sxx += (x - meanX) ** 2;
    sxy += (x - meanX) * (y - meanY);
  }
  if (n < 2 || sxx === 0) throw new RangeError("a line needs at least two distinct x");
  const slope = sxy / sxx;
  return { slope, intercept: meanY - slope * meanX };
}

/** The first sample at or after `t` (the last one if none is). */
export function sampleAtOrAfter(samples: readonly SoakSample[], t: number): SoakSample {
  const found = samples.find((sample) => sample.t >= t) ?? samples.at(-1);
  if (found === undefined) throw new RangeError("no samples");
  return found;
}

export interface RssTrend {
  /** Time of the warm-up-end sample, s. */
  warmupEndS: number;
  /** Least-squares slope over the samples from warm-up end on, MiB per hour. */
  slopeMiBPerHour: number;
  /** fitted(end) / fitted(warm-up end) − 1, in %. */
  driftPercent: number;
}

/**
 * The RSS line fitted to the samples from the warm-up's end on. A fitted
 * value, not the last sample, so one garbage collection just before the end
 * does not decide the drift. `read` picks the part of RSS (default: all of it).
 */
export function rssTrend(
  samples: readonly SoakSample[],
  warmupS: number,
  read: (sample: SoakSample) => number = (sample) => sample.rssMiB,
): RssTrend {
  const warmupEndS = sampleAtOrAfter(samples, warmupS).t;
  const after = samples.filter((sample) => sample.t >= warmupEndS);
  const fit = leastSquares(after.map((sample) => ({ x: sample.t, y: read(sample) })));
  const endS = after.at(-1)?.t ?? warmupEndS;
  const fitted = (t: number) => fit.intercept + fit.slope * t;
  return {
    warmupEndS,
    slopeMiBPerHour: fit.slope * 3600,
    driftPercent: (fitted(endS) / fitted(warmupEndS) - 1) * 100,
  };
}

/** Minimum, maximum and last value of a non-empty series. */
export function minMaxEnd(values: readonly number[]): { min: number; max: number; end: number } {
  const end = values.at(-1);
  if (end === undefined) throw new RangeError("empty series");
  return { min: Math.min(...values), max: Math.max(...values), end };
}

/** A series as columns (one array per field, gauges by name): compact in JSON. */
export type SeriesColumns = Record<string, number[]>;

const BASE_FIELDS = [
  "t",
  "rssMiB",
  "rssAnonMiB",
  "rssFileMiB",
  "fds",
  "csi",
  "threads",
  "cpuS",
] as const;

export function seriesColumns(samples: readonly SoakSample[]): SeriesColumns {
  const gauges = [...new Set(samples.flatMap((sample) => Object.keys(sample.gauges)))].sort();
  const columns: SeriesColumns = {};
  for (const field of BASE_FIELDS) {
    columns[field] = samples.map((sample) => Math.round(sample[field] * 10) / 10);
  }
  for (const gauge of gauges) columns[gauge] = samples.map((sample) => sample.gauges[gauge] ?? NaN);
  return columns;
}

/** CSV of several agents' series: "series,<field>..." then one line per sample. */
export function seriesCsv(series: Record<string, SeriesColumns>): string {
  const fields = [...new Set(Object.values(series).flatMap((columns) => Object.keys(columns)))];
  const lines = [["series", ...fields].join(",")];
  for (const [name, columns] of Object.entries(series)) {
    const length = columns["t"]?.length ?? 0;
    for (let row = 0; row < length; row++) {
      const cells = fields.map((field) => {
        const value = columns[field]?.[row];
        return value === undefined || value === null || Number.isNaN(value) ? "" : String(value);
      });
      lines.push([JSON.stringify(name), ...cells].join(","));
    }
  }
  return lines.join("\n") + "\n";
}
