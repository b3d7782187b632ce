/**
 * The fleet scenario (bench/README.md): what a fleet of node agents costs the
 * one API server they share. Per run, a fresh cluster with N fake nodes, each
 * with the upstream hostpath driver and one agent (all ours or all upstream,
 * the same flags, capacity publishing on), then M WaitForFirstConsumer claims
 * used by M pods, which kube-scheduler places by the published capacity.
 * Reported: kube-apiserver's CPU, watch events sent and requests by verb over
 * the agents' start-up, the burst and an idle minute once done; its memory;
 * the agents' memory summed; the time to every claim Bound; and a check that
 * every claim got exactly one volume.
 */
import { agentFlags } from "./agent_runner.ts";
import {
  type ApiServerCounters,
  describeLargest,
  REPORTED_VERBS,
  totalRefused,
  totalRequests,
} from "./fleet_metrics.ts";
import { assertFleetFits, fleetMemoryNote } from "./fleet_memory.ts";
import { FLEET_AGENT_ARGS, FLEET_BURST, FLEET_POOL, FLEET_QPS } from "./fleet_launch.ts";
import {
  CREATE_CONCURRENCY,
  FLEET_CLAIM_SIZE,
  type FleetSample,
  type FleetSize,
  IDLE_MS,
  runFleet,
  SETTLE_MS,
} from "./fleet_run.ts";
import type { BenchAgent, ScenarioResult } from "./report.ts";
import {
  collectAlternatingRuns,
  measuredResult,
  type Scenario,
  type ScenarioOptions,
} from "./scenario.ts";

export const DEFAULT_FLEET_SIZE: FleetSize = { nodes: 50, claims: 1000 };
/** Each fake node allows 250 pods (tests/cluster/nodes.ts); keep room for a skewed placement. */
const MAX_CLAIMS_PER_NODE = 200;

/**
 * The suggested FlowSchema the agents' ServiceAccounts fall in (outside
 * kube-system); kube-scheduler, kube-controller-manager and the benchmark use
 * system:masters credentials (flow schema exempt) and the drivers send no
 * request, so its count is the agents'.
 */
const AGENT_FLOW_SCHEMA = "service-accounts";

const VERB_METRICS = Object.fromEntries(
  REPORTED_VERBS.map((verb) => [verb, `kube-apiserver requests ${verb}, three windows`]),
) as Record<typeof REPORTED_VERBS[number], string>;

const METRIC = {
  cpuTotal: "kube-apiserver CPU, three windows (s)",
  cpuStartup: "kube-apiserver CPU, agents' start-up (s)",
  cpuBurst: "kube-apiserver CPU, burst to every claim Bound (s)",
  cpuIdle: "kube-apiserver CPU once done, per idle minute (s)",
  watchTotal: "watch events sent, three windows",
  watchStartup: "watch events sent, agents' start-up",
  watchBurst: "watch events sent, burst",
  watchIdle: "watch events sent once done, per idle minute",
  requestsStartup: "kube-apiserver requests, agents' start-up",
  requestsBurst: "kube-apiserver requests, burst",
  requestsIdle: "kube-apiserver requests once done, per idle minute",
  agentRequestsStartup: "the agents' requests of every kind, agents' start-up",
  agentRequestsBurst: "the agents' requests of every kind, burst",
  agentRequestsIdle: "the agents' requests of every kind once done, per idle minute",
  ...VERB_METRICS,
  refused: "kube-apiserver requests answered 429 Too Many Requests, three windows",
  apiPeak: "kube-apiserver peak RSS, VmHWM at the end (MiB)",
  apiRss: "kube-apiserver RSS at the end (MiB)",
  agentsBound: "agents' RSS summed, every claim Bound (MiB)",
  agentsIdle: "agents' RSS summed, after the idle minute (MiB)",
  agentsPeak: "agents' peak RSS summed, VmHWM (MiB)",
  ready: "launch → every agent ready and every node's capacity published (s)",
  agentReady: "each agent's start → ready, median of the agents (ms)",
  bound: "first create → every claim Bound (s)",
  notBoundOnce: "claims not Bound to exactly one PV (a check: 0)",
} as const;
type MetricKey = keyof typeof METRIC;

const DECIMALS = Object.fromEntries(
  Object.keys(METRIC).map((key) => [key, key.startsWith("cpu") || key === "ready" ? 2 : 0]),
) as Record<MetricKey, number>;
DECIMALS.bound = 1;

const perMinute = (count: number) => count * 60_000 / IDLE_MS;

function windowsSummed(sample: FleetSample): ApiServerCounters[] {
  return [sample.startup, sample.burst, sample.idle];
}

function summedOverWindows(
  sample: FleetSample,
  read: (counters: ApiServerCounters) => Record<string, number>,
): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const counters of windowsSummed(sample)) {
    for (const [key, count] of Object.entries(read(counters))) sums[key] = (sums[key] ?? 0) + count;
  }
  return sums;
}

/**
 * One run in a line: where kube-scheduler put the claims, which watch events
 * dominated (over the three windows, and in the idle minute alone), whose
 * requests priority and fairness let through and whose it refused.
 */
function describeRun(agent: BenchAgent, sample: FleetSample): string {
  const byResource = summedOverWindows(sample, (counters) => counters.watchEventsByResource);
  const refused = describeLargest(
    summedOverWindows(sample, (counters) => counters.refusedByFlowSchema),
    4,
  );
  const dispatched = describeLargest(
    summedOverWindows(sample, (counters) => counters.dispatchedByFlowSchema),
    5,
  );
  const { fewestOnANode, mostOnANode } = sample.check;
  return `${agent}: ${fewestOnANode}–${mostOnANode} claims per node; requests by flow schema ` +
    `${dispatched}; watch events ` +
    `${describeLargest(byResource, 6)}; in the idle minute ` +
    `${describeLargest(sample.idle.watchEventsByResource, 4) || "none"}; refused by flow ` +
    `schema: ${refused || "none"}${describeRefusals(sample)}`;
}

/** Which requests were refused, window by window ("" when none was). */
function describeRefusals(sample: FleetSample): string {
  const windows = { "start-up": sample.startup, burst: sample.burst, idle: sample.idle };
  const parts = Object.entries(windows)
    .map(([name, counters]) => [name, describeLargest(counters.refusedByRequest, 4)])
    .filter(([, text]) => text !== "")
    .map(([name, text]) => `${name}: ${text}`);
  return parts.length === 0 ? "" : ` (${parts.join("; ")})`;
}

function agentRequests(counters: ApiServerCounters): number {
  return counters.dispatchedByFlowSchema[AGENT_FLOW_SCHEMA] ?? 0;
}

/** One run's figures, keyed as METRIC. */
export function fleetFigures(sample: FleetSample): Record<MetricKey, number> {
  const windows = windowsSummed(sample);
  const sum = (read: (counters: ApiServerCounters) => number) =>
    windows.reduce((total, counters) => total + read(counters), 0);
  const verbs = Object.fromEntries(
    REPORTED_VERBS.map((verb) => [verb, sum((counters) => counters.requests[verb] ?? 0)]),
  ) as Record<typeof REPORTED_VERBS[number], number>;
  return {
    cpuTotal: sum((counters) => counters.cpuSeconds),
    cpuStartup: sample.startup.cpuSeconds,
    cpuBurst: sample.burst.cpuSeconds,
    cpuIdle: perMinute(sample.idle.cpuSeconds),
    watchTotal: sum((counters) => counters.watchEvents),
    watchStartup: sample.startup.watchEvents,
    watchBurst: sample.burst.watchEvents,
    watchIdle: perMinute(sample.idle.watchEvents),
    requestsStartup: totalRequests(sample.startup),
    requestsBurst: totalRequests(sample.burst),
    requestsIdle: perMinute(totalRequests(sample.idle)),
    agentRequestsStartup: agentRequests(sample.startup),
    agentRequestsBurst: agentRequests(sample.burst),
    agentRequestsIdle: perMinute(agentRequests(sample.idle)),
    ...verbs,
    refused: sum(totalRefused),
    apiPeak: sample.apiServerPeakMiB,
    apiRss: sample.apiServerRssMiB,
    agentsBound: sample.agentsRssAtBoundMiB,
    agentsIdle: sample.agentsRssIdleMiB,
    agentsPeak: sample.agentsPeakMiB,
    ready: sample.readyS,
    agentReady: sample.agentReadyMedianMs,
    bound: sample.boundS,
    notBoundOnce: sample.check.notBoundOnce,
  };
}

function fleetNotes(size: FleetSize, runs: string[]): string[] {
  const flags = [...agentFlags({ qps: FLEET_QPS, burst: FLEET_BURST, httpPort: 0 })]
    .map((flag) => flag.replace(":0", ":PORT"));
  return [
    `Size: ${size.nodes} fake nodes, ${size.claims} claims of ${FLEET_CLAIM_SIZE} ` +
    "(--nodes, --claims). A fresh cluster per run: control plane + one upstream hostpath " +
    `driver per node (pool ${FLEET_POOL}, 10Gi; --v=2) + one agent per node, all ours or all ` +
    "upstream. Driver: hostpath, not the project's test driver, because one idle instance " +
    "measured 16 MiB RSS against 65 MiB for the test driver (a Deno process), and it answers " +
    "GetCapacity per pool just as well; 50 of them cost 0.8 GiB instead of 3.2 GiB.",
    `Both agents, on every node: ${flags.join(" ")} ${FLEET_AGENT_ARGS.join(" ")} ` +
    "(the default client budget, QPS 5 / burst 10; the capacity client's QPS 1 / burst 5 and " +
    "1 min poll at their defaults), CSIDriver with storageCapacity, upstream's rbac.yaml for " +
    "both (WaitForFirstConsumer provisioning needs nothing beyond it).",
    `Workload: ${size.claims} claims of the WaitForFirstConsumer class ` +
    `csi-hostpath-${FLEET_POOL}, each used by a pod (${CREATE_CONCURRENCY} creates in ` +
    "flight: claim, then its pod). kube-scheduler picks the node, checking the published " +
    "CSIStorageCapacity, and writes selected-node; the node's agent provisions; " +
    "kube-controller-manager binds. The pods never run (no kubelet on fake nodes); binding " +
    "happens before.",
    "Windows (kube-apiserver's user+sys CPU from /proc/<pid>/stat; apiserver_watch_events_total " +
    "and apiserver_request_total summed over all resources, from its /metrics): start-up = " +
    "just before the first agent is launched → every agent ready and every node's " +
    `CSIStorageCapacity published, + ${SETTLE_MS / 1000} s settle; burst = first create → ` +
    "every claim Bound; idle = the minute after every pod is scheduled (it trails the last " +
    `claim by a few seconds; that gap is in no window). "Three windows" sums them.`,
    "Requests by verb as apiserver_request_total labels them (POST = create, PUT = update; " +
    "APPLY and others only in the per-window totals); WATCH counts watches started (the " +
    "counter counts a watch when it ends, so the open ones from apiserver_longrunning_requests " +
    "are added). Every client is counted: the benchmark's own creates (claims, pods, the " +
    "agents' ServiceAccounts, tokens and RBAC bindings), its two watches and one /metrics " +
    "scrape per window, kube-scheduler's and kube-controller-manager's traffic: the same " +
    "workload for both agents, so the difference is the agents'.",
    "Agents' memory: VmRSS of each agent process summed, when every claim is Bound and at the " +
    "end of the idle minute; VmHWM summed at the end. kube-apiserver: VmHWM (since the " +
    "cluster started) and VmRSS at the end.",
    "Check: after the idle minute, every claim Bound and named by exactly one PV (claimRef uid).",
    "429s: apiserver_request_total with code 429, which counts priority and fairness's " +
    "rejections too (k8s.io/apiserver endpoints/metrics RecordDroppedRequest), every client; " +
    "by flow schema from apiserver_flowcontrol_rejected_requests_total (added 2026-11-27).",
    "The agents' requests of every kind: apiserver_flowcontrol_dispatched_requests_total of " +
    `flow schema ${AGENT_FLOW_SCHEMA}, which holds only the agents' ServiceAccounts; unlike ` +
    "apiserver_request_total it counts discovery GETs and 404s of paths no API serves (added " +
    "2026-11-29).",
    "Per run, the claims per node (fewest–most), the requests by flow schema over the three " +
    "windows (added 2026-11-29), the largest watch event counts by resource " +
    "over the three windows and in the idle minute alone (added 2026-11-27), and the refused " +
    `requests by flow schema, then by window, verb and resource: ${runs.join(" | ")}.`,
    fleetMemoryNote(),
    "Machine: 2 cores shared with other developers' work while this was measured: the " +
    "figures are indicative, not precise.",
  ];
}

function runFleetScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const size: FleetSize = {
    nodes: options.nodes ?? DEFAULT_FLEET_SIZE.nodes,
    claims: options.claims ?? DEFAULT_FLEET_SIZE.claims,
  };
  if (size.claims > size.nodes * MAX_CLAIMS_PER_NODE) {
    throw new Error(
      `fleet: ${size.claims} claims on ${size.nodes} nodes is more than ` +
        `${MAX_CLAIMS_PER_NODE} pods per fake node (each allows 250): use more --nodes`,
    );
  }
  assertFleetFits(size.nodes);
  const runs: string[] = [];
  return measuredResult(FLEET, options, async () => {
    const metrics = await collectAlternatingRuns(options, {
      id: "fleet",
      metrics: METRIC,
      decimals: DECIMALS,
      measure: async (agent) => {
        const sample = await runFleet(agent, {
          size,
          log: options.log,
          ...(options.apiServerProfileDir === undefined
            ? {}
            : { profileDir: options.apiServerProfileDir }),
        });
        runs.push(describeRun(agent, sample));
        options.log(
          `[fleet] ${agent}: every pod scheduled after ${sample.scheduledS.toFixed(1)} s`,
        );
        return fleetFigures(sample);
      },
    });
    return { notes: fleetNotes(size, runs), metrics };
  });
}

export const FLEET: Scenario = {
  id: "fleet",
  title: "A fleet against one API server: one agent per fake node (default 50) with capacity " +
    "publishing, 1000 WaitForFirstConsumer claims used by pods",
  defaultRuns: 3,
  run: runFleetScenario,
};
