/**
 * Start-up: time from process start to ready, the CPU that took,
 * and RSS after 10 s idle, for ours and upstream on the same cluster (one
 * node, the test driver, no StorageClasses, no claims). Ready means caches
 * synced, read from each agent's log the same way (ours' /readyz is then
 * checked to answer 200); see agent_runner.ts.
 *
 * `deno task bench:startup [-- --runs N]` (default 5 runs per agent)
 */
import { startCluster } from "../tests/cluster/cluster.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { delay } from "../tests/cluster/wait.ts";
import { launchAgent, waitAgentReady } from "./agent_runner.ts";
import { runScenarios } from "./cli.ts";
import { describeBenchBinaries } from "./binaries.ts";
import { loadAverage, machineInfo } from "./machine.ts";
import {
  cpuSeconds,
  cpuSecondsFine,
  pageFaults,
  residentMiB,
  residentSplitMiB,
} from "./process_stats.ts";
import type { BenchAgent, ScenarioResult } from "./report.ts";
import { collectAlternatingRuns, type Scenario, type ScenarioOptions } from "./scenario.ts";
import { describeThreads, readThreadGroups, totalOf, totalsBetween } from "./thread_split.ts";

const IDLE_MS = 10_000;

const METRIC = {
  http: "start → HTTP endpoint answers (ms)",
  ready: "start → ready (ms)",
  cpu: "agent CPU, start → ready (ms)",
  cpuFine: "agent CPU, start → ready, scheduler clock (ms)",
  minorFaults: "page faults, start → ready: minor (a page in memory mapped)",
  majorFaults: "page faults, start → ready: major (read from disk)",
  idleCpu: "agent CPU during the 10 s idle, scheduler clock (ms)",
  idleRuns: "thread runs during the 10 s idle (wake-ups and preemptions)",
  rss: "RSS after ready + 10 s idle (MiB)",
  anonymous: "… of it anonymous memory: heaps, stacks (MiB)",
  file: "… of it pages of mapped files: the executable (MiB)",
} as const;
type MetricKey = keyof typeof METRIC;

const DECIMALS: Record<MetricKey, number> = {
  http: 0,
  ready: 0,
  cpu: 0,
  cpuFine: 1,
  minorFaults: 0,
  majorFaults: 0,
  idleCpu: 1,
  idleRuns: 0,
  rss: 1,
  anonymous: 1,
  file: 1,
};

/**
 * One agent started on node-a, ready, then idle 10 s; its RSS also split by
 * what backs it. `onIdleThreads` gets the idle 10 s by thread group.
 */
export async function measureStartup(
  cluster: RunningCluster,
  agent: BenchAgent,
  options: { onIdleThreads?: (line: string) => void } = {},
): Promise<Record<MetricKey, number>> {
  const launched = await launchAgent(cluster, { kind: agent, node: "node-a", qps: 5, burst: 10 });
  try {
    const ready = await waitAgentReady(launched, { timeoutMs: 60_000 });
    const cpuAtReady = cpuSeconds(launched.pid);
    const cpuFineAtReady = cpuSecondsFine(launched.pid);
    const faultsAtReady = pageFaults(launched.pid);
    const threadsAtReady = readThreadGroups(launched.pid);
    await delay(IDLE_MS);
    const threadsAtEnd = readThreadGroups(launched.pid);
    const perSecond = { perUnit: IDLE_MS / 1000, unit: "s" };
    options.onIdleThreads?.(describeThreads(threadsAtReady, threadsAtEnd, perSecond));
    return {
      http: ready.httpMs,
      ready: ready.readyMs,
      cpu: cpuAtReady * 1000,
      cpuFine: cpuFineAtReady * 1000,
      minorFaults: faultsAtReady.minor,
      majorFaults: faultsAtReady.major,
      idleCpu: totalOf(totalsBetween(threadsAtReady.cpuMs, threadsAtEnd.cpuMs)),
      idleRuns: totalOf(totalsBetween(threadsAtReady.runs, threadsAtEnd.runs)),
      rss: residentMiB(launched.pid),
      ...residentSplitMiB(launched.pid),
    };
  } finally {
    await launched.handle.stop();
  }
}

const NOTES = [
  "One cluster for all runs: control plane + node-a with the test CSI driver, the CSIDriver " +
  "object, no StorageClass, no claims, no PVs; agents one at a time with the same flags " +
  "(bench/agent_runner.ts), default --kube-api-qps=5 --kube-api-burst=10.",
  "Start: right after the harness spawned the process (its kubeconfig and RBAC are made before). " +
  "HTTP endpoint: the first answer of any status to GET /metrics on --http-endpoint. Ready: " +
  'the agent\'s log line, read every 5 ms: ours "Informers synced; provisioning claims ..." ' +
  "(CSI handshake done, informers synced, workers starting; its /readyz is then checked to " +
  'answer 200, untimed), upstream "Started provisioner controller" (written after its ' +
  "informers synced and its workers started; it has no /readyz). Until 2026-11-23 ours was " +
  "timed by GET /readyz every 5 ms, which made it serve about 20 probes during its start-up.",
  "CPU: user+sys from /proc/<pid>/stat at ready (10 ms ticks). CPU, scheduler clock: the " +
  "run time of the process's threads alive at ready, summed from /proc/<pid>/task/*/schedstat " +
  "(nanoseconds; added 2026-11-23, since a start-up of 40 ms is 4 ticks). Page faults: minflt " +
  "and majflt of /proc/<pid>/stat at ready (added 2026-11-25). Idle CPU and thread runs: the " +
  "scheduler clock's run time and run count (third field of schedstat) of the threads alive at " +
  "ready and 10 s later, the difference (added 2026-11-28; a thread that ends in between " +
  "takes its counts with it). RSS: VmRSS 10 s " +
  "after ready, and split by what backs it (/proc/<pid>/smaps_rollup: Anonymous, and the rest " +
  "of Rss). Each start runs a fresh, synced copy of the agent's binary (bench/page_cache.ts), the " +
  "same state at every start: the file pages a process maps depend on the page " +
  "cache's state (one binary: 47.9 MiB as an older file, 52.6 as a fresh copy, 58.2 read back " +
  "whole); until 2026-11-25 the built files were run in whatever state they were.",
];

function idleThreadNote(runs: string[]): string {
  return "The idle 10 s by thread, per second: CPU, and the times each thread group was put on " +
    "a CPU (its runs: wake-ups and, in brackets, returns after a preemption), of the threads " +
    "alive at the end (/proc/<pid>/task/*/schedstat and status' nonvoluntary_ctxt_switches; " +
    `upstream's Go threads share one name): ${runs.join(" | ")}.`;
}

/** The start-up scenario's cluster: node-a with the test driver, no StorageClass, no agent. */
export function startEmptyCluster(log: (line: string) => void): Promise<RunningCluster> {
  return startCluster({
    nodes: 1,
    driver: "test",
    driverOptions: { logLevel: "warn" },
    storageClasses: false,
    agent: "none",
    log,
  });
}

async function runStartup(options: ScenarioOptions): Promise<ScenarioResult> {
  const machine = machineInfo();
  const date = new Date().toISOString();
  const binaries = await describeBenchBinaries(options.log);
  const cluster = await startEmptyCluster(options.log);
  const idleThreads: string[] = [];
  try {
    const metrics = await collectAlternatingRuns(options, {
      id: "startup",
      metrics: METRIC,
      decimals: DECIMALS,
      measure: (agent, run) =>
        measureStartup(cluster, agent, {
          onIdleThreads: (line) => idleThreads.push(`${agent} run ${run + 1}: ${line}`),
        }),
    });
    return {
      id: "startup",
      title: STARTUP.title,
      date,
      runs: options.runs,
      machine,
      loadAfter: loadAverage(),
      binaries,
      notes: [...NOTES, idleThreadNote(idleThreads)],
      metrics,
    };
  } catch (error) {
    options.log(await cluster.tailLogs(20));
    throw error;
  } finally {
    await cluster.stop();
  }
}

export const STARTUP: Scenario = {
  id: "startup",
  title: "process start → ready, and RSS after 10 s idle (empty cluster, one node)",
  defaultRuns: 5,
  run: runStartup,
};

if (import.meta.main) await runScenarios([STARTUP], Deno.args);
