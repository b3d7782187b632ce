/**
 * The fleet's agents (fleet_run.ts): one fresh copy of the binary per node,
 * each node's agent launched with the fleet's flags, and the wait until every
 * agent is ready and every node's CSIStorageCapacity is published.
 */
import type { V1CSIStorageCapacity } from "@kubernetes/client-node";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { waitFor } from "../tests/cluster/wait.ts";
import { allCapacities } from "../tests/integration/capacity_support.ts";
import {
  freshAgentBinary,
  launchAgent,
  type LaunchedAgent,
  waitAgentReady,
} from "./agent_runner.ts";
import type { BenchAgent } from "./report.ts";
import { runPool } from "./workload.ts";

/** The cluster's default pool of every node's driver (10Gi), and its class. */
export const FLEET_POOL = "fast";
/** Besides agentFlags(): each agent publishes its node's CSIStorageCapacity, owned by nothing. */
export const FLEET_AGENT_ARGS = ["--enable-capacity", "--capacity-ownerref-level=-1"];
/** The agents' default client budget (upstream's --kube-api-qps / --kube-api-burst defaults). */
export const FLEET_QPS = 5;
export const FLEET_BURST = 10;
/** Agents launched at once. */
const LAUNCH_CONCURRENCY = 10;
/** How often the published capacities are listed at launch (until 2026-11-26: every second). */
const CAPACITY_POLL_MS = 250;
/** Copies of the binary written at once before the launch. */
const COPY_CONCURRENCY = 4;
/** How long any one step of a fleet run may take before the run fails. */
export const FLEET_STEP_TIMEOUT_MS = 10 * 60_000;

/**
 * One fresh copy of the binary per node, made before the launch is timed:
 * copying and syncing 50 copies of ours (118 MB each, upstream's 70 MB) took
 * seconds of disk writes, which until 2026-11-26 counted in ours' launch time.
 */
export function copyBinaries(cluster: RunningCluster, kind: BenchAgent): Promise<string[]> {
  return runPool(cluster.nodes.length, {
    concurrency: COPY_CONCURRENCY,
    task: () => freshAgentBinary(cluster, kind),
  });
}

/**
 * Every node's agent launched (LAUNCH_CONCURRENCY at a time, as a DaemonSet
 * rollout would), ready, and every node's CSIStorageCapacity for the class
 * published. Readiness is probed every 250 ms: 50 agents probed every 5 ms
 * would load the 2 cores the API server needs.
 */
export async function startFleet(
  cluster: RunningCluster,
  options: { kind: BenchAgent; binaries: readonly string[] },
): Promise<{ agents: LaunchedAgent[]; readyMs: number[] }> {
  const { kind, binaries } = options;
  const agents = await runPool(cluster.nodes.length, {
    concurrency: LAUNCH_CONCURRENCY,
    task: (index) =>
      launchAgent(cluster, {
        kind,
        binary: binaries[index]!,
        node: cluster.nodes[index]!.name,
        qps: FLEET_QPS,
        burst: FLEET_BURST,
        extraArgs: FLEET_AGENT_ARGS,
      }),
  });
  const ready = await Promise.all(
    agents.map((agent) =>
      waitAgentReady(agent, { timeoutMs: FLEET_STEP_TIMEOUT_MS, probeIntervalMs: 250 })
    ),
  );
  const storageClass = cluster.storageClassName(FLEET_POOL);
  const nodeOf = (object: V1CSIStorageCapacity) =>
    object.nodeTopology?.matchLabels?.[cluster.topologyKey];
  await waitFor(async () => {
    const objects = (await allCapacities(cluster))
      .filter((object) => object.storageClassName === storageClass);
    return new Set(objects.map(nodeOf)).size === cluster.nodes.length;
  }, {
    description: "every node's CSIStorageCapacity for the class",
    timeoutMs: FLEET_STEP_TIMEOUT_MS,
    intervalMs: CAPACITY_POLL_MS,
  });
  return { agents, readyMs: ready.map((times) => times.readyMs) };
}
