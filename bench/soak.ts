/**
 * The soak scenario (bench/README.md, "soak"): on one cluster with the
 * 10,000 + 10,000 objects of scale_fixture.ts in the background, ours on
 * node-a and upstream on node-z (swapped on every other run) run at the same
 * time, each with its own stream of one claim per second that is deleted
 * shortly after it is Bound (soak_churn.ts), for --minutes (default 30). Each
 * agent is read every 15 s (soak_sampler.ts); the figures are the RSS trend
 * after warm-up, the ranges of fds and CSI connections, threads, timers or
 * goroutines, and a check that the drivers hold no volume after a drain.
 *
 * Both at once rather than one after the other: a soak is long, and side by
 * side both agents get the same API server, the same background and the same
 * machine load at every moment; each sees the other's claims and PVs, alike.
 */
import { fakeNodeNames } from "../tests/cluster/nodes.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { delay } from "../tests/cluster/wait.ts";
import { launchAgent, waitAgentReady } from "./agent_runner.ts";
import { BENCH_AGENTS, type BenchAgent, type ScenarioResult } from "./report.ts";
import { startScaleCluster } from "./scale_fixture.ts";
import { measuredResult, type Scenario, type ScenarioOptions } from "./scenario.ts";
import { ClaimChurn } from "./soak_churn.ts";
import { soakMetrics, soakNotes, type SoakRunOutcome } from "./soak_report.ts";
import { sampleAgents, type SampledAgent } from "./soak_sampler.ts";
import { type SeriesColumns, seriesColumns } from "./soak_series.ts";
import { createBenchNamespace } from "./workload.ts";

const PAIRS = 10_000;
/** node-b .. node-k hold the fixture; the agents' nodes are outside that range. */
const FIXTURE_NODES = fakeNodeNames(11).slice(1);
const AGENT_NODES = ["node-a", "node-z"] as const;
export const SOAK_DEFAULT_MINUTES = 30;
const SAMPLE_INTERVAL_MS = 15_000;
/** A claim lives this long once Bound, so a few volumes per node exist at any time. */
const CLAIM_LIFETIME_MS = 5_000;
/** After the stream: time for the last claims to be Bound, deleted and their volumes deleted. */
const DRAIN_MS = 180_000;
/** 1 claim/s is about 5 writes/s per agent (events, PV create, delete, finalizer): above the default QPS 5. */
const QPS = 50;
const BURST = 100;
const TITLE = `1 claim/s created and deleted per agent, ${PAIRS} Bound claims + ${PAIRS} PVs ` +
  "of other nodes in the background; ours and upstream at the same time on two nodes";

/** The scenario's result with every run's series, kept in the results file's data comment. */
export interface SoakResult extends ScenarioResult {
  series: Record<string, SeriesColumns>;
}

/** ours on node-a on the first run, on node-z on the second, and so on. */
function placement(run: number): Record<BenchAgent, string> {
  const [first, second] = AGENT_NODES;
  return run % 2 === 0 ? { ours: first, upstream: second } : { ours: second, upstream: first };
}

/** Waits (up to the drain time) until the nodes' drivers hold no volume; returns what is left. */
async function volumesAfterDrain(
  cluster: RunningCluster,
  nodes: readonly string[],
): Promise<Record<string, number>> {
  const deadline = performance.now() + DRAIN_MS;
  for (;;) {
    const left = await Promise.all(nodes.map(async (node) =>
      [
        node,
        (await cluster.node(node).volumes()).length,
      ] as const
    ));
    if (left.every(([, count]) => count === 0) || performance.now() > deadline) {
      return Object.fromEntries(left);
    }
    await delay(2_000);
  }
}

/** One run: both agents ready, the stream with sampling, the drain, the check. */
async function soakRun(
  cluster: RunningCluster,
  run: { index: number; durationMs: number; log: (line: string) => void },
): Promise<Record<BenchAgent, SoakRunOutcome>> {
  const nodes = placement(run.index);
  const namespace = `soak-${run.index + 1}`;
  await createBenchNamespace(cluster.admin, namespace);
  const launched = await Promise.all(
    BENCH_AGENTS.map((kind) =>
      launchAgent(cluster, { kind, node: nodes[kind], qps: QPS, burst: BURST })
    ),
  );
  try {
    await Promise.all(launched.map((agent) => waitAgentReady(agent, { timeoutMs: 10 * 60_000 })));
    await delay(5_000); // let the start-up settle (first relists, event flushes)
    const sampled = Object.fromEntries(launched.map((agent) => [agent.kind, {
      pid: agent.pid,
      httpPort: agent.httpPort,
      csiSocket: cluster.node(nodes[agent.kind]).csiSocket,
    }])) as Record<BenchAgent, SampledAgent>;
    const churn = new ClaimChurn(cluster.admin, {
      namespace,
      nodes: Object.values(nodes),
      lifetimeMs: CLAIM_LIFETIME_MS,
      log: run.log,
    });
    run.log(`[soak] run ${run.index + 1}: ours on ${nodes.ours}, upstream on ${nodes.upstream}`);
    const [, series] = await Promise.all([
      churn.stream(run.durationMs),
      sampleAgents(sampled, {
        durationMs: run.durationMs,
        intervalMs: SAMPLE_INTERVAL_MS,
      }),
    ]);
    const claimsLeft = await churn.drain(DRAIN_MS);
    if (claimsLeft > 0) run.log(`[soak] ${claimsLeft} claims still there after the drain`);
    const volumes = await volumesAfterDrain(cluster, Object.values(nodes));
    const outcome = (kind: BenchAgent): SoakRunOutcome => ({
      node: nodes[kind],
      samples: series[kind],
      counts: churn.counts(nodes[kind]),
      volumesLeft: volumes[nodes[kind]] ?? NaN,
    });
    return { ours: outcome("ours"), upstream: outcome("upstream") };
  } finally {
    await Promise.all(launched.map((agent) => agent.handle.stop()));
  }
}

async function runSoak(options: ScenarioOptions): Promise<SoakResult> {
  const minutes = options.minutes ?? SOAK_DEFAULT_MINUTES;
  const durationMs = minutes * 60_000;
  const series: Record<string, SeriesColumns> = {};
  const result = await measuredResult({ id: "soak", title: TITLE }, options, async () => {
    const { cluster, fixture } = await startScaleCluster({
      agentNodes: [...AGENT_NODES],
      pairs: PAIRS,
      otherNodes: FIXTURE_NODES,
    }, options.log);
    try {
      const runs: Record<BenchAgent, SoakRunOutcome>[] = [];
      for (let index = 0; index < options.runs; index++) {
        const outcome = await soakRun(cluster, { index, durationMs, log: options.log });
        for (const kind of BENCH_AGENTS) {
          const { node, samples, counts, volumesLeft } = outcome[kind];
          series[`${kind} run ${index + 1} (${node})`] = seriesColumns(samples);
          options.log(`[soak] ${kind}: ${JSON.stringify({ counts, volumesLeft })}`);
        }
        runs.push(outcome);
      }
      const settings = { minutes, pairs: PAIRS, qps: QPS, burst: BURST };
      const timing = { intervalMs: SAMPLE_INTERVAL_MS, lifetimeMs: CLAIM_LIFETIME_MS };
      return {
        notes: soakNotes(runs, { fixture, ...settings, ...timing, drainMs: DRAIN_MS }),
        metrics: soakMetrics(runs, { warmupS: (minutes * 60) / 6 }),
      };
    } catch (error) {
      options.log(await cluster.tailLogs(20));
      throw error;
    } finally {
      await cluster.stop();
    }
  });
  return { ...result, series };
}

export const SOAK: Scenario = {
  id: "soak",
  title: TITLE,
  defaultRuns: 1,
  run: runSoak,
};
