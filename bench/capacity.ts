/**
 * The capacity scenario (bench/README.md): capacity freshness. One cluster for
 * all runs (node-a with the test driver, a 1Ti pool, the CSIDriver with
 * storageCapacity). Each run starts one agent with capacity enabled, waits
 * for its first CSIStorageCapacity, measures 100 paced provisions and a burst
 * of 100 claims (capacity_measure.ts), then stops it and removes its objects,
 * so that the next agent starts from none. The claims stay (each run has its
 * own namespaces): no volume is deleted while another run measures.
 */
import { startCluster } from "../tests/cluster/cluster.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { waitFor } from "../tests/cluster/wait.ts";
import { allCapacities } from "../tests/integration/capacity_support.ts";
import { launchAgent, waitAgentReady } from "./agent_runner.ts";
import { describeBenchBinaries } from "./binaries.ts";
import {
  CAPACITY_NODE,
  CAPACITY_POOL,
  type CapacityBurst,
  type Freshness,
  measureCapacityBurst,
  measureFreshness,
} from "./capacity_measure.ts";
import { loadAverage, machineInfo } from "./machine.ts";
import type { BenchAgent, ScenarioResult } from "./report.ts";
import { collectAlternatingRuns, type Scenario, type ScenarioOptions } from "./scenario.ts";
import { percentile } from "./stats.ts";

const PROVISIONS = 100;
const BURST_CLAIMS = 100;
/** Pause after the last capacity write before the next provision: 1 QPS refills a token. */
const PACE_MS = 1_500;
/** Besides agentFlags(): the capacity publisher, without an owner (no Pod behind the agent). */
const CAPACITY_ARGS = ["--enable-capacity", "--capacity-ownerref-level=-1"];

const METRIC = {
  volumeP50: `PV appears → capacity updated, p50 of ${PROVISIONS} provisions (ms)`,
  volumeP99: `PV appears → capacity updated, p99 of ${PROVISIONS} provisions (ms)`,
  answerP50: "CreateVolume answered → capacity updated, p50 (ms)",
  answerP99: "CreateVolume answered → capacity updated, p99 (ms)",
  writes: `burst of ${BURST_CLAIMS} claims: capacity writes`,
  getCapacity: `burst of ${BURST_CLAIMS} claims: GetCapacity calls`,
  settle: `burst of ${BURST_CLAIMS} claims: last CreateVolume answer → final capacity (ms)`,
} as const;
type MetricKey = keyof typeof METRIC;

const DECIMALS: Record<MetricKey, number> = {
  volumeP50: 1,
  volumeP99: 1,
  answerP50: 1,
  answerP99: 1,
  writes: 0,
  getCapacity: 0,
  settle: 0,
};

function sampleOf(freshness: Freshness, burst: CapacityBurst): Record<MetricKey, number> {
  return {
    volumeP50: percentile(freshness.fromVolume, 50),
    volumeP99: percentile(freshness.fromVolume, 99),
    answerP50: percentile(freshness.fromCreateVolume, 50),
    answerP99: percentile(freshness.fromCreateVolume, 99),
    writes: burst.writes,
    getCapacity: burst.getCapacityCalls,
    settle: burst.settleMs,
  };
}

/** One run: the agent started and publishing, both measurements, then no agent and no objects. */
async function measureCapacity(
  cluster: RunningCluster,
  run: { agent: BenchAgent; run: number },
): Promise<Record<MetricKey, number>> {
  const launched = await launchAgent(cluster, {
    kind: run.agent,
    node: CAPACITY_NODE,
    qps: 5,
    burst: 10,
    extraArgs: CAPACITY_ARGS,
  });
  try {
    await waitAgentReady(launched, { timeoutMs: 60_000 });
    await waitFor(async () => (await allCapacities(cluster)).length === 1 || undefined, {
      description: `${run.agent}'s first CSIStorageCapacity`,
      timeoutMs: 60_000,
    });
    const suffix = `${run.agent}-${run.run}`;
    const freshness = await measureFreshness(cluster, {
      namespace: `freshness-${suffix}`,
      provisions: PROVISIONS,
      paceMs: PACE_MS,
    });
    const burst = await measureCapacityBurst(cluster, {
      namespace: `burst-${suffix}`,
      claims: BURST_CLAIMS,
    });
    return sampleOf(freshness, burst);
  } finally {
    await launched.handle.stop();
    await cluster.admin.storage.deleteCollectionNamespacedCSIStorageCapacity({
      namespace: cluster.agentNamespace,
    });
  }
}

const NOTES = [
  `One cluster for all runs: control plane + node-a with the test CSI driver (zero latency, ` +
  `pool test-fast of ${CAPACITY_POOL}, never full), CSIDriver with storageCapacity, class ` +
  "test-fast (WaitForFirstConsumer). Both agents: the shared flags plus " +
  `${CAPACITY_ARGS.join(" ")}; --kube-api-capacity-qps 1 / burst 5 and ` +
  "--capacity-poll-interval 1m left at their defaults.",
  `Freshness: ${PROVISIONS} claims of 100Mi (already selected to node-a) created one after ` +
  `the other, each ${PACE_MS} ms after the last capacity write seen, so that the 1 QPS write ` +
  "budget is not what is measured; the time from the PV's ADDED event (and from the driver's " +
  "recorded CreateVolume answer) to the CSIStorageCapacity event showing the new free space, " +
  "both from watches of the benchmark. Each run's p50 and p99; the table gives their median " +
  "and range over the runs.",
  `Burst: ${BURST_CLAIMS} claims created at once; capacity writes are the MODIFIED events of ` +
  "the agent's object from the first create until 3 s after the final value showed; " +
  "GetCapacity calls as the driver recorded them.",
  "Between runs the agent stops and its objects are deleted; the claims stay, in each run's " +
  "own namespaces, so no volume is deleted while a run measures.",
];

async function runCapacity(options: ScenarioOptions): Promise<ScenarioResult> {
  const machine = machineInfo();
  const date = new Date().toISOString();
  const binaries = await describeBenchBinaries(options.log);
  const cluster = await startCluster({
    nodes: [CAPACITY_NODE],
    driver: "test",
    driverOptions: { logLevel: "warn", capacity: { fast: CAPACITY_POOL } },
    agent: "none",
    log: options.log,
  });
  try {
    const metrics = await collectAlternatingRuns(options, {
      id: "capacity",
      metrics: METRIC,
      decimals: DECIMALS,
      measure: (agent, run) => measureCapacity(cluster, { agent, run }),
    });
    return {
      id: "capacity",
      title: CAPACITY.title,
      date,
      runs: options.runs,
      machine,
      loadAfter: loadAverage(),
      binaries,
      notes: NOTES,
      metrics,
    };
  } catch (error) {
    options.log(await cluster.tailLogs(20));
    throw error;
  } finally {
    await cluster.stop();
  }
}

export const CAPACITY: Scenario = {
  id: "capacity",
  title: `capacity freshness: ${PROVISIONS} paced provisions and a burst of ${BURST_CLAIMS} ` +
    "claims, CSIStorageCapacity as a watch sees it",
  defaultRuns: 3,
  run: runCapacity,
};
