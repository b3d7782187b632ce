/**
 * Reads each soak agent every interval on an absolute schedule: VmRSS (and
 * its anonymous and file-backed parts), open fds, threads, CPU seconds, CSI
 * connections (soak_proc.ts) and the gauges of its own /metrics that stand
 * for timers or goroutines.
 */
import { delay } from "../tests/cluster/wait.ts";
import { parsePrometheusText } from "./api_metrics.ts";
import { cpuSeconds, residentMiB, residentSplitMiB } from "./process_stats.ts";
import { csiConnectionCount, openFdCount, threadCount } from "./soak_proc.ts";
import type { SoakSample } from "./soak_series.ts";

/**
 * Gauges read from each agent's /metrics when it exposes them. Ours
 * (prom-client's default metrics) has the nodejs_* ones: active handles and
 * resources are what prom-client offers for timers and sockets, and
 * heap used for the JavaScript heap; upstream (client_golang) has go_goroutines.
 */
export const SOAK_GAUGES: readonly string[] = [
  "nodejs_active_handles_total",
  "nodejs_active_resources_total",
  "nodejs_heap_size_used_bytes",
  "go_goroutines",
];

/** One process under observation. */
export interface SampledAgent {
  pid: number;
  httpPort: number;
  /** The driver socket it was given in --csi-address. */
  csiSocket: string;
}

async function scrapeGauges(httpPort: number): Promise<Record<string, number>> {
  const response = await fetch(`http://127.0.0.1:${httpPort}/metrics`, {
    signal: AbortSignal.timeout(5_000),
  });
  const gauges: Record<string, number> = {};
  for (const sample of parsePrometheusText(await response.text())) {
    if (SOAK_GAUGES.includes(sample.name)) gauges[sample.name] = sample.value;
  }
  return gauges;
}

/** One reading of one agent at `t` seconds. */
export async function readAgent(agent: SampledAgent, t: number): Promise<SoakSample> {
  const [csi, gauges] = await Promise.all([
    csiConnectionCount(agent.pid, agent.csiSocket),
    scrapeGauges(agent.httpPort),
  ]);
  const split = residentSplitMiB(agent.pid);
  return {
    t,
    rssMiB: residentMiB(agent.pid),
    rssAnonMiB: split.anonymous,
    rssFileMiB: split.file,
    fds: openFdCount(agent.pid),
    csi,
    threads: threadCount(agent.pid),
    cpuS: cpuSeconds(agent.pid),
    gauges,
  };
}

/**
 * Reads every agent at 0, interval, 2·interval, ... and once more at
 * `durationMs` itself (the end), all agents at the same moments.
 */
export async function sampleAgents<K extends string>(
  agents: Record<K, SampledAgent>,
  options: { durationMs: number; intervalMs: number },
): Promise<Record<K, SoakSample[]>> {
  const keys = Object.keys(agents) as K[];
  const series = Object.fromEntries(keys.map((key) => [key, [] as SoakSample[]])) as Record<
    K,
    SoakSample[]
  >;
  const moments: number[] = [];
  for (let at = 0; at < options.durationMs; at += options.intervalMs) moments.push(at);
  moments.push(options.durationMs);
  const start = performance.now();
  for (const at of moments) {
    const wait = start + at - performance.now();
    if (wait > 0) await delay(wait);
    const readings = await Promise.all(keys.map((key) => readAgent(agents[key], at / 1000)));
    keys.forEach((key, index) => series[key].push(readings[index]!));
  }
  return series;
}
