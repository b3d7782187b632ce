/**
 * The burst and default-budget scenarios (bench/README.md): N WaitForFirstConsumer claims
 * with selected-node already set to node-a arrive at a ready agent. Each run
 * gets a fresh cluster (1 node, test driver at zero latency), so that no run
 * inherits the objects, volumes or etcd growth of the one before.
 */
import { startCluster } from "../tests/cluster/cluster.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { delay, withTimeout } from "../tests/cluster/wait.ts";
import { launchAgent, type LaunchedAgent, waitAgentReady } from "./agent_runner.ts";
import { type ClaimProgress, watchClaimProgress } from "./claim_progress.ts";
import { describeBenchBinaries } from "./binaries.ts";
import { loadAverage, machineInfo } from "./machine.ts";
import { cpuSeconds, peakResidentMiB } from "./process_stats.ts";
import { type BenchAgent, SampleBook, type ScenarioResult } from "./report.ts";
import { alternatingRuns, type Scenario, type ScenarioOptions } from "./scenario.ts";
import { describeThreads, readThreadGroups } from "./thread_split.ts";
import { createBenchNamespace, createSelectedClaims } from "./workload.ts";

export interface BurstSettings {
  id: string;
  title: string;
  claims: number;
  /** --kube-api-qps and --kube-api-burst of both agents. */
  qps: number;
  burst: number;
  notes: string[];
}

const NAMESPACE = "bench";
const NODE = "node-a";
/** Claims created in parallel by the benchmark. */
const CREATE_CONCURRENCY = 50;
const RUN_TIMEOUT_MS = 15 * 60_000;

const METRIC = {
  created: "benchmark: all claims created (s)",
  volumes: "time until every PV exists (s)",
  drain: "… of which after the last claim was created (s)",
  bound: "time until every claim is Bound (s)",
  cpuVolumes: "agent CPU per claim, ready → every PV exists (ms)",
  cpuBound: "agent CPU per claim, ready → every claim Bound (ms)",
  peak: "agent peak RSS (VmHWM, MiB)",
} as const;

type BurstSample = Record<keyof typeof METRIC, number>;

/** Runs `work` on a fresh one-node cluster; prints the logs' tails if it fails. */
async function withFreshCluster<T>(
  log: (line: string) => void,
  work: (cluster: RunningCluster) => Promise<T>,
): Promise<T> {
  const cluster = await startCluster({
    nodes: 1,
    driver: "test",
    // Driver logs cost CPU on a 2-core machine; warnings still show.
    driverOptions: { logLevel: "warn" },
    storageCapacity: false,
    agent: "none",
    log,
  });
  try {
    return await work(cluster);
  } catch (error) {
    log(await cluster.tailLogs(20));
    throw error;
  } finally {
    await cluster.stop();
  }
}

/**
 * Creates the claims and waits for both milestones; CPU counts from just
 * before the first create. `threads`: the agent's CPU and its threads' runs
 * (times put on a CPU) split by thread from then until every claim is Bound
 * (thread_split.ts).
 */
async function timeBurst(
  cluster: RunningCluster,
  run: { launched: LaunchedAgent; settings: BurstSettings; progress: ClaimProgress },
): Promise<{ sample: BurstSample; threads: string }> {
  const { launched, settings, progress } = run;
  const threadsAtStart = readThreadGroups(launched.pid);
  const cpuAtStart = cpuSeconds(launched.pid);
  const start = performance.now();
  await createSelectedClaims(cluster.admin, {
    namespace: NAMESPACE,
    count: settings.claims,
    node: NODE,
    concurrency: CREATE_CONCURRENCY,
  });
  const created = performance.now();
  const [volumes, bound] = await withTimeout(
    Promise.all([progress.allVolumes, progress.allBound]),
    { timeoutMs: RUN_TIMEOUT_MS, description: `${settings.id}: every claim Bound` },
  );
  const threadsAtEnd = readThreadGroups(launched.pid);
  const perClaimMs = (cpu: number) => ((cpu - cpuAtStart) / settings.claims) * 1000;
  const sample = {
    created: (created - start) / 1000,
    volumes: (volumes.at - start) / 1000,
    drain: (volumes.at - created) / 1000,
    bound: (bound.at - start) / 1000,
    cpuVolumes: perClaimMs(volumes.cpuSeconds),
    cpuBound: perClaimMs(bound.cpuSeconds),
    peak: peakResidentMiB(launched.pid),
  };
  const perClaim = { perUnit: settings.claims, unit: "claim" };
  return { sample, threads: describeThreads(threadsAtStart, threadsAtEnd, perClaim) };
}

/** One run: a fresh cluster, the agent ready, the burst, the samples. */
export function measureBurst(
  agent: BenchAgent,
  run: { settings: BurstSettings; log: (line: string) => void },
): Promise<{ sample: BurstSample; threads: string; watchRestarts: number }> {
  const { settings } = run;
  return withFreshCluster(run.log, async (cluster) => {
    await createBenchNamespace(cluster.admin, NAMESPACE);
    const launched = await launchAgent(cluster, {
      kind: agent,
      node: NODE,
      qps: settings.qps,
      burst: settings.burst,
    });
    await waitAgentReady(launched, { timeoutMs: 120_000 });
    // Let the start-up settle (first relists, event flushes) before the burst.
    await delay(1_000);
    const progress = await watchClaimProgress(cluster.admin, {
      namespace: NAMESPACE,
      expected: settings.claims,
      agentPid: launched.pid,
    });
    try {
      const timed = await timeBurst(cluster, { launched, settings, progress });
      return { ...timed, watchRestarts: progress.restarts() };
    } finally {
      progress.stop();
    }
  });
}

async function runBurst(
  settings: BurstSettings,
  options: ScenarioOptions,
): Promise<ScenarioResult> {
  const machine = machineInfo();
  const date = new Date().toISOString();
  const binaries = await describeBenchBinaries(options.log);
  const book = new SampleBook();
  const decimals: Record<keyof typeof METRIC, number> = {
    created: 1,
    volumes: 1,
    drain: 1,
    bound: 1,
    cpuVolumes: 2,
    cpuBound: 2,
    peak: 0,
  };
  for (const key of Object.keys(METRIC) as (keyof typeof METRIC)[]) {
    book.define(METRIC[key], decimals[key]);
  }
  const restarts: string[] = [];
  const threads: string[] = [];
  for (const { agent, run } of alternatingRuns(options.runs)) {
    options.log(`[${settings.id}] run ${run + 1}/${options.runs}: ${agent}`);
    const measured = await measureBurst(agent, { settings, log: options.log });
    const { sample, watchRestarts } = measured;
    options.log(`[${settings.id}] ${agent}: ${JSON.stringify(sample)}`);
    options.log(`[${settings.id}] ${agent} by thread: ${measured.threads}`);
    threads.push(`${agent} run ${run + 1}: ${measured.threads}`);
    if (watchRestarts > 0) restarts.push(`${agent} run ${run + 1}: ${watchRestarts}`);
    for (const key of Object.keys(METRIC) as (keyof typeof METRIC)[]) {
      book.add(agent, METRIC[key], sample[key]);
    }
  }
  return {
    id: settings.id,
    title: settings.title,
    date,
    runs: options.runs,
    machine,
    loadAfter: loadAverage(),
    binaries,
    notes: [...settings.notes, watchRestartNote(restarts), threadNote(threads)],
    metrics: book.metrics,
  };
}

function threadNote(runs: string[]): string {
  return "CPU by thread, and the times each thread was put on a CPU (its runs: wake-ups and, " +
    "in brackets, returns after a preemption), ready → every claim Bound, of the threads alive " +
    "at the end (/proc/<pid>/task/*/schedstat and status' nonvoluntary_ctxt_switches; " +
    `upstream's Go threads share one name): ${runs.join(" | ")}.`;
}

function watchRestartNote(restarts: string[]): string {
  if (restarts.length === 0) return "The benchmark's watches never had to be restarted.";
  return "kube-apiserver closed a benchmark watch as too slow and it was restarted (" +
    `${restarts.join(", ")}): a milestone seen just after a restart may be late by that much.`;
}

const COMMON_NOTES = [
  "Fresh cluster per run: control plane + node-a with the test CSI driver (zero latency, " +
  "log level warn, state file on), CSIDriver without storageCapacity, class test-fast " +
  "(WaitForFirstConsumer).",
  "The agent starts and becomes ready (see README), 1 s pause, then the benchmark creates the " +
  "claims (50 requests in flight) already carrying selected-node=node-a and the " +
  "storage-provisioner annotations, as kube-scheduler and the PV controller leave them. Times " +
  'count from the first create. "Every PV exists" and "every claim Bound" come from watches; ' +
  "binding is done by kube-controller-manager (QPS 200, burst 400).",
  "CPU: /proc/<pid>/stat user+sys of the agent, read when it became ready (+1 s) and when the " +
  "watch event completing the milestone arrived, divided by the number of claims.",
];

export function burstScenario(settings: BurstSettings): Scenario {
  return {
    id: settings.id,
    title: settings.title,
    defaultRuns: 3,
    run: (options) => runBurst(settings, options),
  };
}

export const BURST_SETTINGS: BurstSettings = {
  id: "burst",
  title: "1000 selected claims, --kube-api-qps=1000 --kube-api-burst=1000",
  claims: 1000,
  qps: 1000,
  burst: 1000,
  notes: COMMON_NOTES,
};

export const DEFAULT_BUDGET_SETTINGS: BurstSettings = {
  id: "default-budget",
  title: "200 selected claims, default --kube-api-qps=5 --kube-api-burst=10",
  claims: 200,
  qps: 5,
  burst: 10,
  notes: COMMON_NOTES,
};

export const BURST: Scenario = burstScenario(BURST_SETTINGS);
export const DEFAULT_BUDGET: Scenario = burstScenario(DEFAULT_BUDGET_SETTINGS);
