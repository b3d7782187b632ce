/**
 * The soak scenario's table rows and notes, from each run's samples and
 * counts. Pure: soak.ts gathers the outcomes.
 */
import { BENCH_AGENTS, type BenchAgent, type MetricSamples, SampleBook } from "./report.ts";
import type { ChurnCounts } from "./soak_churn.ts";
import { minMaxEnd, rssTrend, sampleAtOrAfter, type SoakSample } from "./soak_series.ts";

/** The part of one agent's run the report reads. */
export interface SoakRunOutcome {
  node: string;
  samples: SoakSample[];
  counts: ChurnCounts;
  volumesLeft: number;
}

type Runs = readonly Record<BenchAgent, SoakRunOutcome>[];

const MIB = 1024 * 1024;

/** Rows with a value per run for both agents, in table order. */
const ROWS: readonly {
  metric: string;
  decimals: number;
  value: (outcome: SoakRunOutcome, warmupS: number) => number;
}[] = [
  { metric: "RSS at the end of warm-up (MiB)", decimals: 1, value: (o, w) => rssAt(o, w) },
  { metric: "RSS at the end (MiB)", decimals: 1, value: (o) => last(o).rssMiB },
  {
    metric: "RSS slope after warm-up, least squares (MiB/h)",
    decimals: 2,
    value: (o, w) => rssTrend(o.samples, w).slopeMiBPerHour,
  },
  {
    metric: "RSS drift: fitted end / fitted warm-up end − 1 (%)",
    decimals: 2,
    value: (o, w) => rssTrend(o.samples, w).driftPercent,
  },
  {
    metric: "… drift of its anonymous part (heaps, stacks) alone (%)",
    decimals: 2,
    value: (o, w) => rssTrend(o.samples, w, (s) => s.rssAnonMiB).driftPercent,
  },
  {
    metric: "… drift of its file-backed part (the executable's pages) alone (%)",
    decimals: 2,
    value: (o, w) => rssTrend(o.samples, w, (s) => s.rssFileMiB).driftPercent,
  },
  {
    // What the agent spends to keep the line flat shows here: a periodic
    // collection or shrink is CPU, so drift alone would not tell the whole cost.
    metric: "CPU over the stream (s)",
    decimals: 1,
    value: (o) => last(o).cpuS - sampleAtOrAfter(o.samples, 0).cpuS,
  },
  {
    metric: "… of it after warm-up (s)",
    decimals: 1,
    value: (o, w) => last(o).cpuS - sampleAtOrAfter(o.samples, w).cpuS,
  },
  ...rangeRows("open file descriptors", (s) => s.fds),
  ...rangeRows("CSI connections", (s) => s.csi),
  { metric: "threads at the end", decimals: 0, value: (o) => last(o).threads },
  { metric: "claims created", decimals: 0, value: (o) => o.counts.created },
  { metric: "claims Bound", decimals: 0, value: (o) => o.counts.bound },
  { metric: "claims deleted", decimals: 0, value: (o) => o.counts.deleted },
  {
    metric: "volumes left on the driver after the drain (check: 0)",
    decimals: 0,
    value: (o) => o.volumesLeft,
  },
];

/**
 * Gauges of the agents' own /metrics, each for the agent that exposes it:
 * there is no common measure of timers (Go has goroutines, not timers), so
 * these rows have one side only and no ratio.
 */
const GAUGE_ROWS: readonly { gauge: string; label: string; scale: number; decimals: number }[] = [
  {
    gauge: "nodejs_active_handles_total",
    label: "timers: active handles (ours: nodejs_active_handles_total)",
    scale: 1,
    decimals: 0,
  },
  {
    gauge: "go_goroutines",
    label: "goroutines (upstream: go_goroutines)",
    scale: 1,
    decimals: 0,
  },
  {
    gauge: "nodejs_heap_size_used_bytes",
    label: "JS heap used (ours: nodejs_heap_size_used_bytes, MiB)",
    scale: 1 / MIB,
    decimals: 1,
  },
];

function last(outcome: SoakRunOutcome): SoakSample {
  const sample = outcome.samples.at(-1);
  if (sample === undefined) throw new RangeError(`no samples on ${outcome.node}`);
  return sample;
}

function rssAt(outcome: SoakRunOutcome, warmupS: number): number {
  return sampleAtOrAfter(outcome.samples, warmupS).rssMiB;
}

function rangeRows(
  name: string,
  read: (sample: SoakSample) => number,
): { metric: string; decimals: number; value: (o: SoakRunOutcome) => number }[] {
  const of = (o: SoakRunOutcome) => minMaxEnd(o.samples.map(read));
  return [
    { metric: `${name}: min`, decimals: 0, value: (o) => of(o).min },
    { metric: `${name}: max`, decimals: 0, value: (o) => of(o).max },
    { metric: `${name}: end`, decimals: 0, value: (o) => of(o).end },
  ];
}

/** The table rows: one value per run and agent (a single run's "median" is that value). */
export function soakMetrics(runs: Runs, options: { warmupS: number }): MetricSamples[] {
  const book = new SampleBook();
  for (const row of ROWS) book.define(row.metric, row.decimals);
  for (const row of GAUGE_ROWS) {
    book.define(`${row.label} at the end of warm-up`, row.decimals);
    book.define(`${row.label} at the end`, row.decimals);
  }
  for (const run of runs) {
    for (const agent of BENCH_AGENTS) {
      const outcome = run[agent];
      for (const row of ROWS) book.add(agent, row.metric, row.value(outcome, options.warmupS));
      const atWarmup = sampleAtOrAfter(outcome.samples, options.warmupS);
      for (const row of GAUGE_ROWS) {
        const warm = atWarmup.gauges[row.gauge];
        const end = last(outcome).gauges[row.gauge];
        if (warm === undefined || end === undefined) continue;
        book.add(agent, `${row.label} at the end of warm-up`, warm * row.scale);
        book.add(agent, `${row.label} at the end`, end * row.scale);
      }
    }
  }
  return book.metrics;
}

/** The largest value of a gauge over every sample of every run of the agent (NaN if never seen). */
export function gaugeMax(runs: Runs, agent: BenchAgent, gauge: string): number {
  const values = runs.flatMap((run) => run[agent].samples.map((s) => s.gauges[gauge]))
    .filter((value): value is number => value !== undefined);
  return values.length === 0 ? NaN : Math.max(...values);
}

export interface SoakFacts {
  fixture: { createMs: number; boundMs: number };
  minutes: number;
  pairs: number;
  qps: number;
  burst: number;
  intervalMs: number;
  lifetimeMs: number;
  drainMs: number;
}

/** How it was measured, with what the runs showed about the gauges and the drain. */
export function soakNotes(runs: Runs, facts: SoakFacts): string[] {
  const s = (ms: number) => (ms / 1000).toFixed(0);
  const placements = runs.map((run, index) =>
    `run ${index + 1}: ours on ${run.ours.node}, upstream on ${run.upstream.node}`
  ).join("; ");
  const failures = runs.flatMap((run) =>
    BENCH_AGENTS.map((agent) => run[agent].counts.createFailures)
  ).reduce((sum, count) => sum + count, 0);
  return [
    `Fixture (once): ${facts.pairs} claims selected to node-b..node-k and their PVs, as in ` +
    `memory-at-scale, created in ${s(facts.fixture.createMs)} s, all Bound ` +
    `${
      s(facts.fixture.boundMs)
    } s after the first create. The agents' nodes are node-a and node-z.`,
    "Ours and upstream run AT THE SAME TIME on two nodes of one cluster, each with its own test " +
    `driver and its own claim stream (${placements}; a second run swaps the nodes). Both see ` +
    "each other's claims and PVs, symmetrically, and share the API server and the machine at " +
    "every moment; so one run of M minutes compares both (not alternating, as the generic Run " +
    "line above says). Same flags for both (agent_runner.ts), " +
    `--kube-api-qps=${facts.qps} --kube-api-burst=${facts.burst}: one claim per second costs ` +
    "each agent about five API writes per second (events, PV create, PV delete, finalizer), " +
    "which the default QPS 5 would queue without end; a soak looks for leaks, not the budget.",
    `Stream: for ${facts.minutes} min, every second one claim per agent node (1Mi, class ` +
    "test-fast, reclaimPolicy Delete, selected-node set as kube-scheduler leaves it); the " +
    "benchmark lists the namespace once a second and deletes each claim " +
    `${s(facts.lifetimeMs)} s after it first saw it Bound, so the agent provisions and deletes ` +
    `volumes throughout. Then a drain of up to ${s(facts.drainMs)} s (no new claims) until the ` +
    "namespace is empty and the drivers hold no volume; the check row is what each driver " +
    `still held. Claim creates that failed: ${failures}.`,
    `Samples every ${s(facts.intervalMs)} s from the stream's start to its end: VmRSS, entries ` +
    "of /proc/<pid>/fd, Threads from /proc/<pid>/status, CSI connections (the agent's socket " +
    "inodes whose peer, per `ss -xn`, is bound to its driver's socket path), and gauges of the " +
    "agent's own /metrics. Warm-up: the first sixth of the stream. Slope: least squares over " +
    "the samples from the end of warm-up on; drift: the fitted line's value at the end over " +
    "its value at the end of warm-up, minus 1. Goal: drift ≤ 5 %.",
    gaugeNote(runs),
    "One run per agent unless --runs: the table's median is then that one value. The full " +
    'series are the "series" field of this scenario in the data comment below; ' +
    "`deno run -A bench/soak_csv.ts <results file>` prints them as CSV.",
  ];
}

function gaugeNote(runs: Runs): string {
  const handles = gaugeMax(runs, "ours", "nodejs_active_handles_total");
  const resources = gaugeMax(runs, "ours", "nodejs_active_resources_total");
  const goroutines = gaugeMax(runs, "upstream", "go_goroutines");
  const bunStub = handles === 0 && resources === 0
    ? "they were 0 in every sample: under Bun, process._getActiveHandles() and " +
      "process.getActiveResourcesInfo(), which prom-client reads, return empty lists even " +
      "with timers pending, so ours exposes no usable timer count; the JS heap used " +
      "(nodejs_heap_size_used_bytes) is given as its in-process series instead"
    : `their largest values were ${handles} and ${resources}`;
  return "Timers and goroutines, as each agent exposes them on /metrics: ours (prom-client's " +
    "default metrics) has nodejs_active_handles_total and nodejs_active_resources_total; " +
    `${bunStub}. Upstream (client_golang) has go_goroutines (largest: ${goroutines}) and no ` +
    "timer count. Those rows have one side only, so no ratio.";
}
