/** The shape every benchmark scenario has, so that main.ts and the per-scenario tasks share one runner. */
import { describeBenchBinaries } from "./binaries.ts";
import { loadAverage, machineInfo } from "./machine.ts";
import { type BenchAgent, type MetricSamples, SampleBook, type ScenarioResult } from "./report.ts";

export interface ScenarioOptions {
  /** Runs per agent. */
  runs: number;
  /** Progress lines (stderr). */
  log: (line: string) => void;
  /** --nodes and --claims: the size, for a scenario that takes one (fleet). */
  nodes?: number;
  claims?: number;
  /** --minutes, for a scenario that runs for a time rather than a count (soak). */
  minutes?: number;
  /** --apiserver-profile: where a scenario that can writes kube-apiserver's CPU profiles (fleet). */
  apiServerProfileDir?: string;
}

export interface Scenario {
  /** The task suffix: `deno task bench:<id>`. */
  id: string;
  title: string;
  /** Runs per agent unless --runs says otherwise. */
  defaultRuns: number;
  run(options: ScenarioOptions): Promise<ScenarioResult>;
}

/** ours, upstream, ours, upstream, ...: a slow drift in the machine's load hits both alike. */
export function alternatingRuns(runs: number): { agent: BenchAgent; run: number }[] {
  return Array.from({ length: runs }, (_, run) => [
    { agent: "ours" as const, run },
    { agent: "upstream" as const, run },
  ]).flat();
}

/**
 * Runs `measure` for ours, upstream, ours, ... (`options.runs` each), logs
 * each sample under `id`, and collects them per metric in the order of `metrics`.
 */
export async function collectAlternatingRuns<K extends string>(
  options: ScenarioOptions,
  spec: {
    id: string;
    metrics: Record<K, string>;
    decimals: Record<K, number>;
    measure: (agent: BenchAgent, run: number) => Promise<Record<K, number>>;
  },
): Promise<MetricSamples[]> {
  const keys = Object.keys(spec.metrics) as K[];
  const book = new SampleBook();
  for (const key of keys) book.define(spec.metrics[key], spec.decimals[key]);
  for (const { agent, run } of alternatingRuns(options.runs)) {
    options.log(`[${spec.id}] run ${run + 1}/${options.runs}: ${agent}`);
    const sample = await spec.measure(agent, run);
    options.log(`[${spec.id}] ${agent}: ${JSON.stringify(sample)}`);
    for (const key of keys) book.add(agent, spec.metrics[key], sample[key]);
  }
  return book.metrics;
}

/**
 * The result of `scenario`: the time, the machine (with its load) and the
 * binaries are taken before `measure` runs, the load again after it.
 */
export async function measuredResult(
  scenario: { id: string; title: string },
  options: ScenarioOptions,
  measure: () => Promise<{ notes: string[]; metrics: MetricSamples[] }>,
): Promise<ScenarioResult> {
  const machine = machineInfo();
  const date = new Date().toISOString();
  const binaries = await describeBenchBinaries(options.log);
  const { notes, metrics } = await measure();
  const { id, title } = scenario;
  return {
    id,
    title,
    date,
    runs: options.runs,
    machine,
    loadAfter: loadAverage(),
    binaries,
    notes,
    metrics,
  };
}
