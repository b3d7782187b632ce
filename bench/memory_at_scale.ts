/**
 * Scenario 3: memory at scale. One cluster holds 10,000 claims and 10,000 PVs
 * of other nodes (scale_fixture.ts), created once and shared by every run.
 * Each run starts one agent on node-a (which owns none of them), waits until
 * it is ready, lets it idle 60 s, and reads its RSS, its CPU and what the API
 * server sent meanwhile. Only one agent runs at a time, so the API server's
 * per-resource counters are this agent's (see api_metrics.ts); a window
 * without any agent measures the rest of the control plane.
 */
import { fakeNodeNames } from "../tests/cluster/nodes.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { delay } from "../tests/cluster/wait.ts";
import { launchAgent, waitAgentReady } from "./agent_runner.ts";
import { type ApiTraffic, scrapeApiTraffic, trafficDelta } from "./api_metrics.ts";
import { describeBenchBinaries } from "./binaries.ts";
import { loadAverage, machineInfo } from "./machine.ts";
import { cpuSeconds, peakResidentMiB, residentMiB } from "./process_stats.ts";
import type { BenchAgent, ScenarioResult } from "./report.ts";
import { startScaleCluster } from "./scale_fixture.ts";
import { sampleSocketBytes } from "./socket_bytes.ts";
import { collectAlternatingRuns, type Scenario, type ScenarioOptions } from "./scenario.ts";

export const PAIRS = 10_000;
/** node-b .. node-k: the nodes the fixture's claims and PVs belong to. */
export const OTHER_NODES = fakeNodeNames(11).slice(1);
const IDLE_MS = 60_000;
const TITLE = `${PAIRS} Bound claims + ${PAIRS} PVs of ${OTHER_NODES.length} other nodes, ` +
  "none of them node-a's: an idle agent's RSS, CPU and API traffic";
const MIB = 1024 * 1024;

const METRIC = {
  ready: "start → ready, informers synced (s)",
  rss: "RSS after ready + 60 s idle (MiB)",
  peak: "peak RSS, start → 60 s idle (VmHWM, MiB)",
  cpuToReady: "agent CPU, start → ready (s)",
  cpuIdle: "agent CPU during the 60 s idle (s)",
  data: "API data received, as encoded by the API server (MiB)",
  wire: "API data received on the wire, TLS after gzip (MiB)",
  watchEvents: "watch events received",
  listResponses: "LIST responses received (pages)",
} as const;
type MetricKey = keyof typeof METRIC;

const DECIMALS: Record<MetricKey, number> = {
  ready: 2,
  rss: 0,
  peak: 0,
  cpuToReady: 2,
  cpuIdle: 2,
  data: 1,
  wire: 1,
  watchEvents: 0,
  listResponses: 0,
};

/** One agent's run on the shared cluster. */
export async function measureIdleAgent(
  cluster: RunningCluster,
  agent: BenchAgent,
): Promise<Record<MetricKey, number>> {
  const before = await scrapeApiTraffic((args) => cluster.kubectl(args));
  // Default client budget (QPS 5, burst 10): what a deployment starts with.
  const launched = await launchAgent(cluster, { kind: agent, node: "node-a", qps: 5, burst: 10 });
  const peerPort = Number(new URL(cluster.server).port);
  const wire = sampleSocketBytes({ pid: launched.pid, peerPort }, { intervalMs: 100 });
  try {
    const ready = await waitAgentReady(launched, { timeoutMs: 10 * 60_000 });
    const cpuAtReady = cpuSeconds(launched.pid);
    await delay(IDLE_MS);
    const rss = residentMiB(launched.pid);
    const peak = peakResidentMiB(launched.pid);
    const cpuAtEnd = cpuSeconds(launched.pid);
    const traffic = trafficDelta(before, await scrapeApiTraffic((args) => cluster.kubectl(args)));
    const wireBytes = await wire.stop();
    return {
      ready: ready.readyMs / 1000,
      rss,
      peak,
      cpuToReady: cpuAtReady,
      cpuIdle: cpuAtEnd - cpuAtReady,
      data: (traffic.listBytes + traffic.watchBytes) / MIB,
      wire: wireBytes / MIB,
      watchEvents: traffic.watchEvents,
      listResponses: traffic.listResponses,
    };
  } finally {
    await wire.stop();
    await launched.handle.stop();
  }
}

/** What the API server sends with no agent running, over a window as long as a run. */
async function baselineTraffic(cluster: RunningCluster, windowMs: number): Promise<ApiTraffic> {
  const kubectl = (args: string[]) => cluster.kubectl(args);
  const before = await scrapeApiTraffic(kubectl);
  await delay(windowMs);
  return trafficDelta(before, await scrapeApiTraffic(kubectl));
}

function describeTraffic(traffic: ApiTraffic): string {
  return `${traffic.listResponses} LIST responses (${traffic.listObjects} items from the cache), ${traffic.watchEvents} watch events, ${
    ((traffic.listBytes + traffic.watchBytes) / MIB).toFixed(2)
  } MiB`;
}

async function runMemoryAtScale(options: ScenarioOptions): Promise<ScenarioResult> {
  const machine = machineInfo();
  const date = new Date().toISOString();
  const binaries = await describeBenchBinaries(options.log);
  // The agent's node-a, the fixture on node-b..node-k, 10 s for the PV controller to drain.
  const { cluster, fixture } = await startScaleCluster(
    { agentNodes: ["node-a"], pairs: PAIRS, otherNodes: OTHER_NODES },
    options.log,
  );
  try {
    const baseline = await baselineTraffic(cluster, IDLE_MS);
    options.log(`[memory-at-scale] baseline without agent: ${describeTraffic(baseline)}`);
    const metrics = await collectAlternatingRuns(options, {
      id: "memory-at-scale",
      metrics: METRIC,
      decimals: DECIMALS,
      measure: async (agent) => {
        const sample = await measureIdleAgent(cluster, agent);
        await delay(5_000);
        return sample;
      },
    });
    return {
      id: "memory-at-scale",
      title: TITLE,
      date,
      runs: options.runs,
      machine,
      loadAfter: loadAverage(),
      binaries,
      notes: scaleNotes({ fixture, baseline }),
      metrics,
    };
  } catch (error) {
    options.log(await cluster.tailLogs(20));
    throw error;
  } finally {
    await cluster.stop();
  }
}

function scaleNotes(facts: {
  fixture: { createMs: number; boundMs: number };
  baseline: ApiTraffic;
}): string[] {
  const seconds = (ms: number) => (ms / 1000).toFixed(0);
  const { fixture } = facts;
  return [
    `Fixture (once, shared by all runs): ${PAIRS} claims selected to node-b..node-k (Node and ` +
    "CSINode objects, no driver process) and one PV each with node affinity to that node, " +
    "spec.csi.driver test.csi.k8s.io and the provisioner finalizer, created through the API " +
    `with 50 requests in flight in ${seconds(fixture.createMs)} s; kube-controller-manager ` +
    `bound them all ${seconds(fixture.boundMs)} s after the first create.`,
    "Each run: one agent on node-a with default --kube-api-qps=5 --kube-api-burst=10, ready as " +
    "in the startup scenario, then 60 s idle; RSS is VmRSS at the end; CPU from /proc/<pid>/stat.",
    "API traffic: delta of kube-apiserver's counters from before the agent starts to the end of " +
    "its idle minute, all resources: the _sum of apiserver_response_sizes{verb=LIST} and " +
    "apiserver_watch_events_sizes (bytes as kube-apiserver wrote them: JSON for ours, protobuf " +
    "for upstream, after the gzip it applies to responses over 128 KiB for a client that accepts " +
    "it; until 2026-11-21 ours' client did not), apiserver_watch_events_total, and apiserver_response_sizes_count{verb=LIST}. Both " +
    "agents receive every claim, PV and class once: ours as LIST pages of 500, upstream " +
    "(client-go 0.36) as the initial events of a streaming list (sendInitialEvents). LIST item " +
    "counters are not reported: they also move with the API server's own reads (by 10,000 or " +
    "20,000 in some windows with no LIST response sent). They count every client, but only one " +
    "agent runs at a time and the control plane is idle: " +
    `in 60 s without any agent they moved by ${describeTraffic(facts.baseline)}.`,
    "On the wire: the agent's own TCP connections to kube-apiserver, from `ss -tinp` " +
    "(tcp_info bytes_received: TLS records, after the gzip kube-apiserver applies to responses " +
    "over 128 KiB when the client accepts it; watch streams are never compressed), sampled every " +
    "100 ms from the agent's start to the end of its idle minute, the largest value of each " +
    "socket summed (a connection that closed loses at most its last 100 ms). Both clients " +
    "accept gzip (Bun's fetch and Go's transport ask for it by default); ours' LIST pages are " +
    "compressed, upstream's streaming list is a watch.",
  ];
}

export const MEMORY_AT_SCALE: Scenario = {
  id: "memory-at-scale",
  title: TITLE,
  defaultRuns: 3,
  run: runMemoryAtScale,
};
