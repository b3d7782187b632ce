/** Summaries of repeated measurements: benchmarks report medians with their range. */

/** Median, minimum and maximum of a non-empty sample. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number;
}

/** Summarizes a sample (the median of an even sample is the mean of the middle two). */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new RangeError("Cannot summarize an empty sample");
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1
    ? sorted[middle] ?? 0
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return { median, min: sorted[0] ?? 0, max: sorted.at(-1) ?? 0, runs: values.length };
}

/** "12.3 (11.9–13.0)" with the given number of decimals. */
export function formatSummary(summary: Summary, decimals = 1): string {
  const f = (value: number) => value.toFixed(decimals);
  return `${f(summary.median)} (${f(summary.min)}–${f(summary.max)})`;
}

/** Nearest-rank percentile (p in 0..100) of a non-empty sample. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError("Cannot take a percentile of an empty sample");
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? NaN;
}
