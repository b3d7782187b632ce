/**
 * The immediate scenario (bench/README.md): the Immediate binding ownership
 * race. A fresh cluster per run: five nodes of the upstream hostpath driver
 * with pools of different sizes, an Immediate class, one agent per node
 * (all ours or all upstream, the same flags: upstream's delays 20 s / 60 s,
 * capacity published for Immediate classes too), then 200 claims at once.
 *
 * Measured the same way for both agents, from outside them:
 * - time until every claim is Bound, and from each claim's create to the
 *   write that made a node its owner (the time to an owner);
 * - conflicts: the agents' selected-node writes (update or patch of a
 *   claim) that kube-apiserver answered 409, from its audit log;
 * - the agents' API requests, from the same audit log;
 * - the agents' CPU, summed over the five processes;
 * - as a check, volume names sent to CreateVolume on more than one node,
 *   from the drivers' recorded calls (0 for both, or the race is broken).
 */
import { type AuditEvent, readAuditEvents } from "../tests/cluster/audit.ts";
import { startCluster } from "../tests/cluster/cluster.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { delay, waitFor, withTimeout } from "../tests/cluster/wait.ts";
import { claimObject } from "../tests/cluster/workloads.ts";
import { allCapacities } from "../tests/integration/capacity_support.ts";
import { createImmediateClass } from "../tests/integration/immediate_support.ts";
import { launchAgent, type LaunchedAgent, waitAgentReady } from "./agent_runner.ts";
import { watchClaimProgress } from "./claim_progress.ts";
import { cpuSeconds } from "./process_stats.ts";
import type { BenchAgent, ScenarioResult } from "./report.ts";
import {
  collectAlternatingRuns,
  measuredResult,
  type Scenario,
  type ScenarioOptions,
} from "./scenario.ts";
import { createBenchNamespace, runPool } from "./workload.ts";

const NODES = ["node-a", "node-b", "node-c", "node-d", "node-e"];
const CLAIMS = 200;
const CLAIM_SIZE = "1Gi";
const CLASS = "immediate-fast";
const NAMESPACE = "bench";
const CREATE_CONCURRENCY = 50;
/** After the last claim is Bound, API requests are still counted this long (late events). */
const TAIL_MS = 5_000;
const RUN_TIMEOUT_MS = 10 * 60_000;
/** The pools: node-a 40Gi, node-b 60Gi … node-e 120Gi (400Gi for 200Gi of claims). */
const poolOf = (index: number) => `${40 + 20 * index}Gi`;

/** Besides agentFlags(): upstream's delays spelled out, capacity for Immediate classes too. */
const RACE_ARGS = [
  "--node-deployment-immediate-binding=true",
  "--node-deployment-base-delay=20s",
  "--node-deployment-max-delay=60s",
  "--enable-capacity",
  "--capacity-for-immediate-binding",
  "--capacity-ownerref-level=-1",
];
const QPS = 50;
const BURST = 100;

const METRIC = {
  bound: `time until every claim is Bound (s)`,
  owner: "mean time from a claim's create to its owner's selected-node write (s)",
  conflicts: "selected-node conflicts (409) per volume",
  requests: "agents' API requests per claim (all 5 agents)",
  cpu: "agent CPU per claim, all 5 agents (ms)",
  exhausted: "claims released after ResourceExhausted and raced for again",
  twice: "volumes created on two nodes for one claim",
} as const;
type MetricKey = keyof typeof METRIC;

const DECIMALS: Record<MetricKey, number> = {
  bound: 1,
  owner: 1,
  conflicts: 3,
  requests: 1,
  cpu: 2,
  exhausted: 0,
  twice: 0,
};

/** Where the harness makes the agents' ServiceAccounts. */
const AGENT_NAMESPACE = "csi-provisioner";

/** The agents' ServiceAccounts, as the harness names them (running_cluster.ts startAgent). */
const AGENT_USERS = NODES.map((node) =>
  `system:serviceaccount:${AGENT_NAMESPACE}:csi-provisioner-${node}`
);

/**
 * From the audit log after its first `skip` events: the agents' requests
 * (one per request), their selected-node conflicts, and when each claim's
 * owner was written (the first successful update or patch of the claim).
 */
async function auditFigures(cluster: RunningCluster, skip: number) {
  const events = (await readAuditEvents(cluster.auditLogPath!)).slice(
    skip,
  ) as (AuditEvent & { stageTimestamp: string })[];
  // A watch logs ResponseStarted and, once closed, ResponseComplete: count it once.
  const requests = events.filter((event) =>
    event.stage === "ResponseComplete" && event.verb !== "watch" ||
    event.stage === "ResponseStarted" && event.verb === "watch"
  );
  const claimWrites = requests.filter((event) =>
    ["update", "patch"].includes(event.verb) &&
    event.objectRef?.resource === "persistentvolumeclaims" &&
    event.objectRef.subresource === undefined
  );
  const ownedAt = new Map<string, number>();
  for (const event of claimWrites) {
    const name = event.objectRef?.name ?? "";
    if (event.responseStatus?.code === 200 && !ownedAt.has(name)) {
      ownedAt.set(name, Date.parse(event.stageTimestamp));
    }
  }
  return {
    requests: requests.length,
    conflicts: claimWrites.filter((event) => event.responseStatus?.code === 409).length,
    ownedAt,
  };
}

/**
 * From the drivers' recorded CreateVolume calls: volume names created (OK)
 * on more than one node, i.e. a claim with two volumes, and names whose
 * CreateVolume was answered ResourceExhausted somewhere (the owner released
 * the claim and it was raced for again).
 */
async function createVolumeFigures(cluster: RunningCluster) {
  const created = new Map<string, Set<string>>();
  const exhausted = new Set<string>();
  for (const node of NODES) {
    for (const call of await cluster.node(node).calls("CreateVolume")) {
      const name = (call.request as { name: string }).name;
      if (call.codeName === "OK") created.set(name, (created.get(name) ?? new Set()).add(node));
      if (call.codeName === "RESOURCE_EXHAUSTED") exhausted.add(name);
    }
  }
  const twice = [...created.values()].filter((nodes) => nodes.size > 1).length;
  return { twice, exhausted: exhausted.size };
}

/** The five agents started and ready, and every node's capacity for the class published. */
async function startAgents(cluster: RunningCluster, kind: BenchAgent): Promise<LaunchedAgent[]> {
  const agents: LaunchedAgent[] = [];
  for (const node of NODES) {
    agents.push(
      await launchAgent(cluster, {
        kind,
        node,
        qps: QPS,
        burst: BURST,
        extraArgs: RACE_ARGS,
        // Ours claims with a merge patch, which upstream's rbac.yaml does not grant.
        rbac: kind === "ours" ? "cluster-admin" : "upstream",
      }),
    );
  }
  await Promise.all(agents.map((agent) => waitAgentReady(agent, { timeoutMs: 120_000 })));
  await waitFor(async () => {
    const objects = await allCapacities(cluster);
    return objects.filter((object) => object.storageClassName === CLASS).length === NODES.length;
  }, { description: "every node's CSIStorageCapacity for the class", timeoutMs: 120_000 });
  return agents;
}

/** One run on a fresh cluster. */
async function measureRace(
  agent: BenchAgent,
  log: (line: string) => void,
): Promise<Record<MetricKey, number>> {
  const cluster = await startCluster({
    nodes: NODES,
    driverOptions: {
      capacity: (_node, index) => ({ fast: poolOf(index) }),
      recordCalls: true,
      verbosity: 2,
    },
    agent: "none",
    log,
    agentNamespace: AGENT_NAMESPACE,
    auditLog: { users: AGENT_USERS },
  });
  try {
    await createImmediateClass(cluster, { name: CLASS, pool: "fast" });
    await createBenchNamespace(cluster.admin, NAMESPACE);
    const agents = await startAgents(cluster, agent);
    await delay(1_000); // let the start-up settle (first relists, capacity writes)
    return await timeRace(cluster, agents);
  } catch (error) {
    log(await cluster.tailLogs(20));
    throw error;
  } finally {
    await cluster.stop();
  }
}

/** The burst and its figures. */
async function timeRace(
  cluster: RunningCluster,
  agents: LaunchedAgent[],
): Promise<Record<MetricKey, number>> {
  const pids = agents.map((agent) => agent.pid);
  const progress = await watchClaimProgress(cluster.admin, {
    namespace: NAMESPACE,
    expected: CLAIMS,
    agentPids: pids,
  });
  try {
    const auditBefore = (await readAuditEvents(cluster.auditLogPath!)).length;
    const cpuBefore = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const start = performance.now();
    const createdAt = await runPool(CLAIMS, {
      concurrency: CREATE_CONCURRENCY,
      task: async (index) => {
        const name = `claim-${String(index).padStart(3, "0")}`;
        await cluster.admin.core.createNamespacedPersistentVolumeClaim({
          namespace: NAMESPACE,
          body: claimObject(name, { storageClass: CLASS, size: CLAIM_SIZE }),
        });
        return [name, Date.now()] as const;
      },
    });
    const bound = await withTimeout(progress.allBound, {
      timeoutMs: RUN_TIMEOUT_MS,
      description: "immediate: every claim Bound",
    });
    await delay(TAIL_MS);
    const { requests, conflicts, ownedAt } = await auditFigures(cluster, auditBefore);
    const waits = createdAt.map(([name, at]) => (ownedAt.get(name) ?? NaN) - at);
    return {
      bound: (bound.at - start) / 1000,
      owner: waits.reduce((sum, wait) => sum + wait, 0) / waits.length / 1000,
      conflicts: conflicts / CLAIMS,
      requests: requests / CLAIMS,
      cpu: ((bound.cpuSeconds - cpuBefore) / CLAIMS) * 1000,
      ...await createVolumeFigures(cluster),
    };
  } finally {
    progress.stop();
  }
}

const NOTES = [
  `Fresh cluster per run: control plane + ${NODES.length} nodes (${NODES.join(", ")}) of the ` +
  "upstream hostpath driver (--v=2, calls recorded by the harness's proxy) with pool " +
  `fast of ${NODES.map((_, index) => poolOf(index)).join(", ")}; CSIDriver with ` +
  `storageCapacity; class ${CLASS} (Immediate). No scheduler involvement: binding is ` +
  "kube-controller-manager's PV controller.",
  `Both agents, on every node: the shared flags plus ${RACE_ARGS.join(" ")} ` +
  `--kube-api-qps=${QPS} --kube-api-burst=${BURST} (a budget that does not throttle the race, ` +
  "so that the race is what is measured). The five agents are ready and every node's " +
  "CSIStorageCapacity for the class exists, 1 s pause, then the benchmark creates " +
  `${CLAIMS} claims of ${CLAIM_SIZE} (${CREATE_CONCURRENCY} requests in flight). Times count ` +
  "from the first create; the time to an owner is each claim's create answered → the " +
  "successful selected-node write (its audit stageTimestamp), averaged over the claims.",
  "Conflicts and API requests come from kube-apiserver's audit log of the five agents' " +
  "ServiceAccounts (one per request, a watch counted once), from the first create until 5 s " +
  "after the last claim was Bound (capacity writes included). A conflict is an update or patch " +
  "of a claim answered 409: upstream sends an Update with the claim's resourceVersion, ours a " +
  "merge patch with it as a precondition. Anchor: upstream's README reports about 500 " +
  "conflicts for 3000 volumes (0.17 per volume) at a 20 s base delay with 100 instances.",
  "RBAC: upstream gets its own rbac.yaml; ours needs patch on claims beyond it (the race's " +
  "selected-node write), so here its ServiceAccounts are cluster-admin (permission checks are " +
  "the API server's, not the agent's, work).",
  "CPU: /proc/<pid>/stat user+sys summed over the five agents, from just before the first " +
  "create to the watch event that made every claim Bound, divided by the number of claims.",
  "Machine: 2 cores shared with other developers' test runs while this was measured: the " +
  "figures are indicative, not precise.",
];

function runImmediate(options: ScenarioOptions): Promise<ScenarioResult> {
  return measuredResult(IMMEDIATE, options, async () => ({
    notes: NOTES,
    metrics: await collectAlternatingRuns(options, {
      id: "immediate",
      metrics: METRIC,
      decimals: DECIMALS,
      measure: (agent) => measureRace(agent, options.log),
    }),
  }));
}

export const IMMEDIATE: Scenario = {
  id: "immediate",
  title: `Immediate binding race: ${CLAIMS} claims on ${NODES.length} nodes of different pool ` +
    "sizes, base delay 20 s, max delay 60 s",
  defaultRuns: 3,
  run: runImmediate,
};
