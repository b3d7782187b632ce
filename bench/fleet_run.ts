/**
 * One run of the fleet scenario (fleet.ts): a fresh cluster with one
 * hostpath driver and one agent (all ours or all upstream) per fake node,
 * then claims used by pods, which kube-scheduler places on the nodes by the
 * CSIStorageCapacity the agents publish. kube-apiserver's counters are read
 * at the edges of three windows: the agents' start-up, the burst, and an idle
 * minute once everything is done.
 */
import { cp } from "node:fs/promises";
import { startCluster } from "../tests/cluster/cluster.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { delay, waitFor, withTimeout } from "../tests/cluster/wait.ts";
import { claimObject, createNamespace, podUsingClaim } from "../tests/cluster/workloads.ts";
import { profileApiServer } from "./apiserver_profile.ts";
import type { LaunchedAgent } from "./agent_runner.ts";
import { type ClaimProgress, type Milestone, watchClaimProgress } from "./claim_progress.ts";
import { checkFleet, describeUnbound, type FleetCheck } from "./fleet_check.ts";
import { copyBinaries, FLEET_POOL, FLEET_STEP_TIMEOUT_MS, startFleet } from "./fleet_launch.ts";
import { describeFleetMemory } from "./fleet_memory.ts";
import { type ApiServerCounters, countersDelta, sampleApiServer } from "./fleet_metrics.ts";
import { peakResidentMiB, residentMiB } from "./process_stats.ts";
import { summarize } from "./stats.ts";
import type { BenchAgent } from "./report.ts";
import { claimName, runPool } from "./workload.ts";

export const FLEET_NAMESPACE = "fleet";
/** Small enough that capacity never runs out: capacity is checked, not exhausted. */
export const FLEET_CLAIM_SIZE = "1Mi";
/** Claims and pods created concurrently by the benchmark. */
export const CREATE_CONCURRENCY = 50;
/** Between every agent ready and the burst: their first relists and capacity writes settle. */
export const SETTLE_MS = 5_000;
export const IDLE_MS = 60_000;

export interface FleetSize {
  nodes: number;
  claims: number;
}

/** What one run measured. */
export interface FleetSample {
  /** kube-apiserver's counters over each window. */
  startup: ApiServerCounters;
  burst: ApiServerCounters;
  idle: ApiServerCounters;
  /** s from the first agent's launch to every agent ready and every node's capacity published. */
  readyS: number;
  /** ms from each agent's start to its ready line, the median over the agents. */
  agentReadyMedianMs: number;
  /** s from the first create to every claim Bound, and to every pod scheduled. */
  boundS: number;
  scheduledS: number;
  apiServerPeakMiB: number;
  apiServerRssMiB: number;
  /** Sums over the agents: VmRSS when every claim is Bound and after the idle minute; VmHWM. */
  agentsRssAtBoundMiB: number;
  agentsRssIdleMiB: number;
  agentsPeakMiB: number;
  check: FleetCheck;
}

/** One run on a fresh cluster of `size.nodes` nodes. */
export async function runFleet(
  kind: BenchAgent,
  options: { size: FleetSize; log: (line: string) => void; profileDir?: string },
): Promise<FleetSample> {
  const cluster = await startCluster({
    nodes: options.size.nodes,
    // hostpath at -v=2: its default -v=4 logs every call of 50 drivers to disk.
    driverOptions: { verbosity: 2 },
    agent: "none",
    log: options.log,
    // The harness turns /debug/pprof off; the last flag wins.
    ...(options.profileDir === undefined ? {} : { apiServerArgs: ["--profiling=true"] }),
  });
  try {
    await createNamespace(cluster.admin, FLEET_NAMESPACE);
    return await measureFleet(cluster, { kind, ...options });
  } catch (error) {
    options.log(await cluster.tailLogs(20));
    throw error;
  } finally {
    await cluster.stop();
  }
}

async function measureFleet(
  cluster: RunningCluster,
  options: { kind: BenchAgent; size: FleetSize; log: (line: string) => void; profileDir?: string },
): Promise<FleetSample> {
  const { size, log } = options;
  const sample = () =>
    sampleApiServer(cluster.apiserver.process.pid, (args) => cluster.kubectl(args));
  const progress = await watchClaimProgress(cluster.admin, {
    namespace: FLEET_NAMESPACE,
    expected: size.claims,
  });
  try {
    const binaries = await copyBinaries(cluster, options.kind);
    const atStart = await sample();
    const launched = performance.now();
    const { agents, readyMs } = await startFleet(cluster, { kind: options.kind, binaries });
    const readyS = (performance.now() - launched) / 1000;
    const agentReadyMedianMs = summarize(readyMs).median;
    log(
      `[fleet] ${agents.length} ${options.kind} agents ready in ${readyS.toFixed(1)} s ` +
        `(each start → ready: median ${agentReadyMedianMs.toFixed(0)} ms)`,
    );
    await delay(SETTLE_MS);
    const atBurst = await sample();
    const start = performance.now();
    const profile = startProfile(cluster, { ...options, window: "burst" });
    await createWorkload(cluster, size.claims);
    const bound = await waitAllBound(cluster, { progress, log });
    if (profile !== undefined) log(`[fleet] kube-apiserver CPU profile: ${await profile}`);
    const atBound = await sample();
    const agentsRssAtBoundMiB = sumOver(agents, residentMiB);
    log(describeFleetMemory(cluster, agents));
    await waitPodsScheduled(cluster);
    const scheduledS = (performance.now() - start) / 1000;
    const idle = await idleMinute(cluster, { ...options, sample });
    const apiServerPid = cluster.apiserver.process.pid;
    return {
      startup: countersDelta(atStart, atBurst),
      burst: countersDelta(atBurst, atBound),
      idle,
      readyS,
      agentReadyMedianMs,
      boundS: (bound.at - start) / 1000,
      scheduledS,
      apiServerPeakMiB: peakResidentMiB(apiServerPid),
      apiServerRssMiB: residentMiB(apiServerPid),
      agentsRssAtBoundMiB,
      agentsRssIdleMiB: sumOver(agents, residentMiB),
      agentsPeakMiB: sumOver(agents, peakResidentMiB),
      check: await fleetCheck(cluster),
    };
  } finally {
    progress.stop();
  }
}

/** Every claim Bound; on a timeout, which claims are not and a copy of the logs first. */
async function waitAllBound(
  cluster: RunningCluster,
  options: { progress: ClaimProgress; log: (line: string) => void },
): Promise<Milestone> {
  const { progress, log } = options;
  const bound = await withTimeout(progress.allBound, {
    timeoutMs: FLEET_STEP_TIMEOUT_MS,
    description: "fleet: every claim Bound",
  }).catch(async (error: Error) => {
    log(`[fleet] ${await unboundSummary(cluster)}`);
    log(`[fleet] logs kept in ${await keepLogs(cluster)}`);
    throw error;
  });
  if (progress.restarts() > 0) {
    log(
      `[fleet] the benchmark's watches were started again ${progress.restarts()} times ` +
        `(${progress.silentRestarts()} after 30 s without an event): every claim Bound ` +
        "may have been seen late by that much",
    );
  }
  return bound;
}

/** kube-apiserver's counters over the idle minute (profiled too when asked for). */
async function idleMinute(
  cluster: RunningCluster,
  options: {
    kind: BenchAgent;
    profileDir?: string;
    log: (line: string) => void;
    sample: () => Promise<ApiServerCounters>;
  },
): Promise<ApiServerCounters> {
  const atIdle = await options.sample();
  const profile = startProfile(cluster, { ...options, window: "idle" });
  await delay(IDLE_MS);
  const atEnd = await options.sample();
  if (profile !== undefined) options.log(`[fleet] kube-apiserver CPU profile: ${await profile}`);
  return countersDelta(atIdle, atEnd);
}

/**
 * A CPU profile of kube-apiserver over a window's first PROFILE_SECONDS, when
 * asked for: the burst's, and the idle minute's (added 2026-11-28: with the
 * same requests and watch events, kube-apiserver spent more CPU in the idle
 * minute with ours than with upstream). Resolves to the file, or why none.
 */
function startProfile(
  cluster: RunningCluster,
  options: { kind: BenchAgent; profileDir?: string; window: "burst" | "idle" },
): Promise<string> | undefined {
  if (options.profileDir === undefined) return undefined;
  return profileApiServer(cluster, {
    dir: options.profileDir,
    name: `${options.kind}-${options.window}-${new Date().toISOString().replaceAll(":", "")}`,
  }).catch((error: Error) => `none (${error.message})`);
}

function sumOver(agents: readonly LaunchedAgent[], read: (pid: number) => number): number {
  return agents.reduce((sum, agent) => sum + read(agent.pid), 0);
}

/** Each claim and a pod using it: kube-scheduler picks the node, the node's agent provisions. */
async function createWorkload(cluster: RunningCluster, claims: number): Promise<void> {
  const storageClass = cluster.storageClassName(FLEET_POOL);
  await runPool(claims, {
    concurrency: CREATE_CONCURRENCY,
    task: async (index) => {
      const name = claimName(index);
      await cluster.admin.core.createNamespacedPersistentVolumeClaim({
        namespace: FLEET_NAMESPACE,
        body: claimObject(name, { storageClass, size: FLEET_CLAIM_SIZE }),
      });
      await cluster.admin.core.createNamespacedPod({
        namespace: FLEET_NAMESPACE,
        body: podUsingClaim(name, name),
      });
    },
  });
}

/**
 * kube-scheduler binds a pod only after its claims are Bound, so the last
 * bindings trail the last claim: the idle minute starts once none is left.
 * Only unscheduled pods are listed (a field selector), so the poll stays cheap.
 */
async function waitPodsScheduled(cluster: RunningCluster): Promise<void> {
  await waitFor(async () => {
    const pending = await cluster.admin.core.listNamespacedPod({
      namespace: FLEET_NAMESPACE,
      fieldSelector: "spec.nodeName=",
    });
    return pending.items.length === 0;
  }, { description: "every pod scheduled", timeoutMs: FLEET_STEP_TIMEOUT_MS, intervalMs: 1_000 });
}

/** The claims left when the run timed out (describeUnbound()). */
async function unboundSummary(cluster: RunningCluster): Promise<string> {
  const { claims, volumes } = await claimsAndVolumes(cluster);
  return describeUnbound(claims, { volumes });
}

/** A copy of every component's log outside the cluster's directory, which stop() removes. */
async function keepLogs(cluster: RunningCluster): Promise<string> {
  const kept = await Deno.makeTempDir({ prefix: "fleet-logs-" });
  await cp(`${cluster.dir}/logs`, kept, { recursive: true });
  return kept;
}

/** After the idle minute, so that its LISTs fall in no window. */
async function fleetCheck(cluster: RunningCluster): Promise<FleetCheck> {
  const { claims, volumes } = await claimsAndVolumes(cluster);
  return checkFleet(claims, { volumes, nodes: cluster.nodes.map((node) => node.name) });
}

/** The fleet's claims and every PV, as kube-apiserver has them. */
async function claimsAndVolumes(cluster: RunningCluster) {
  const claims = await cluster.admin.core.listNamespacedPersistentVolumeClaim({
    namespace: FLEET_NAMESPACE,
  });
  const volumes = await cluster.admin.core.listPersistentVolume();
  return { claims: claims.items, volumes: volumes.items };
}
