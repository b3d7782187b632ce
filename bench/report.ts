/**
 * What a benchmark scenario produces (raw samples per agent and metric) and
 * the one comparison table every scenario is printed in. Pure: no I/O.
 */
import { type MachineInfo } from "./machine.ts";
import { formatSummary, summarize } from "./stats.ts";

/** The two agents every scenario compares. */
export type BenchAgent = "ours" | "upstream";

export const BENCH_AGENTS: readonly BenchAgent[] = ["ours", "upstream"];

/** One metric's samples, one per run, for each agent (empty: not measured for that agent). */
export interface MetricSamples {
  /** With its unit, e.g. "time until every PV exists (s)". */
  metric: string;
  decimals: number;
  ours: number[];
  upstream: number[];
}

/** A scenario's outcome, as kept in bench/results/latest.md. */
export interface ScenarioResult {
  /** Task suffix, e.g. "burst" for `deno task bench:burst`. */
  id: string;
  title: string;
  /** ISO time the scenario started. */
  date: string;
  /** Runs per agent. */
  runs: number;
  /** The machine, with its load average when the scenario started and ended. */
  machine: MachineInfo;
  loadAfter: number[];
  /** The agent binaries run (version, path, sha256). */
  binaries: string[];
  /** How it was measured, and anything reduced or unusual. */
  notes: string[];
  metrics: MetricSamples[];
}

/** "0.42×", or "–" when a side has no samples or the upstream median is 0. */
export function formatRatio(ours: readonly number[], upstream: readonly number[]): string {
  if (ours.length === 0 || upstream.length === 0) return "–";
  const denominator = summarize(upstream).median;
  if (denominator === 0) return "–";
  const ratio = summarize(ours).median / denominator;
  return `${ratio.toFixed(ratio >= 10 ? 1 : 2)}×`;
}

function cell(samples: readonly number[], decimals: number): string {
  return samples.length === 0 ? "–" : formatSummary(summarize(samples), decimals);
}

export const TABLE_HEADER: readonly string[] = [
  "| scenario | metric | ours: median (min–max) | upstream: median (min–max) | ours/upstream |",
  "|---|---|---|---|---|",
];

/**
 * The commit ours was built from, as its `--version` line in the binaries
 * says, or as an older scenario's notes say ("compiled from git HEAD abc1234").
 */
export function oursCommit(result: ScenarioResult): string | undefined {
  for (const line of [...result.binaries, ...result.notes]) {
    const match = /\(commit ([0-9a-f]{7})|compiled from (?:git HEAD|branch \S+ at) ([0-9a-f]{7})/
      .exec(line);
    if (match !== null) return match[1] ?? match[2];
  }
  return undefined;
}

/** The table rows of one scenario. */
export function tableRows(result: ScenarioResult): string[] {
  const commit = oursCommit(result);
  const scenario = `${result.id} (${result.runs} runs${commit ? `, ours at ${commit}` : ""})`;
  return result.metrics.map((metric) =>
    `| ${scenario} | ${metric.metric} | ${cell(metric.ours, metric.decimals)} | ${
      cell(metric.upstream, metric.decimals)
    } | ${formatRatio(metric.ours, metric.upstream)} |`
  );
}

/** One table over all the given scenarios, header included. */
export function comparisonTable(results: readonly ScenarioResult[]): string {
  return [...TABLE_HEADER, ...results.flatMap(tableRows)].join("\n");
}

/** Collects samples run by run into MetricSamples, keeping the metrics' order. */
export class SampleBook {
  readonly #metrics = new Map<string, MetricSamples>();

  /** Declares a metric (order of declaration is the table's order). */
  define(metric: string, decimals: number): void {
    if (!this.#metrics.has(metric)) {
      this.#metrics.set(metric, { metric, decimals, ours: [], upstream: [] });
    }
  }

  add(agent: BenchAgent, metric: string, value: number): void {
    const samples = this.#metrics.get(metric);
    if (samples === undefined) throw new Error(`metric "${metric}" was not defined`);
    samples[agent].push(value);
  }

  get metrics(): MetricSamples[] {
    return [...this.#metrics.values()];
  }
}
