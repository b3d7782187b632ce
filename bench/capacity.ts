/**
 * Capacity freshness benchmark, this agent against upstream csi-provisioner
 * on the same cluster (one fake node, the test CSI driver, both agents with
 * the same flags: upstream's distributed deployment, capacity QPS 1 / burst 5
 * and the 1 min poll left at their defaults):
 *
 * 1. freshness: N provisions one after the other, paced (default 1.5 s
 *    apart, so that the 1 QPS write budget is not what is measured); for
 *    each, the time from the PV appearing (and from the driver's
 *    CreateVolume answering) to the CSIStorageCapacity showing the new free
 *    space, as a watch sees them;
 * 2. burst: M claims at once; how many capacity writes (and GetCapacity
 *    calls) the agent makes, and how long after the driver's last
 *    CreateVolume answer the published capacity is final.
 *
 * `deno task bench:capacity [-- --provisions 100 --burst 100 --pace-ms 1500 --agents ours,upstream]`
 */
import { parseArgs } from "node:util";
import { NODE_DEPLOYMENT_ARGS } from "../tests/cluster/agents.ts";
import { startCluster } from "../tests/cluster/cluster.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { waitFor } from "../tests/cluster/wait.ts";
import { createNamespace } from "../tests/cluster/workloads.ts";
import {
  allCapacities,
  type CapacityEvent,
  watchCapacities,
  watchVolumeAdds,
} from "../tests/integration/capacity_support.ts";
import { selectedClaim } from "../tests/integration/support.ts";
import { formatSummary, summarize } from "./stats.ts";

type AgentKind = "ours" | "upstream";

const NODE = "node-a";
const CLASS = "test-fast";
const POOL_BYTES = 1024n ** 4n; // 1Ti: never full
const MiB = 1024n ** 2n;

interface Freshness {
  /** From the PV appearing to the new capacity appearing, ms (negative: capacity first). */
  fromVolume: number[];
  /** From the driver's CreateVolume answer to the new capacity appearing, ms. */
  fromCreateVolume: number[];
}

interface Burst {
  claims: number;
  writes: number;
  getCapacityCalls: number;
  /** From the driver's last CreateVolume answer to the final capacity appearing, ms. */
  settleMs: number;
}

/** Nearest-rank percentile of a non-empty sample. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** Wall-clock ms of a performance.now() reading, comparable with the driver's timestamps. */
const epochMs = (at: number) => performance.timeOrigin + at;

async function usedBytes(cluster: RunningCluster): Promise<bigint> {
  const [pool] = await cluster.node(NODE).control.pools();
  return BigInt(pool?.usedBytes ?? 0);
}

async function createClaim(
  cluster: RunningCluster,
  target: { namespace: string; name: string; size: string },
): Promise<void> {
  await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: target.namespace,
    body: selectedClaim(target.name, {
      node: NODE,
      storageClass: CLASS,
      size: target.size,
      driverName: cluster.driverName,
    }),
  });
}

/** The first event after `from` that shows `bytes` free. */
async function capacityShown(
  events: CapacityEvent[],
  options: { bytes: bigint; from: number; description: string },
): Promise<CapacityEvent> {
  return await waitFor(
    () =>
      Promise.resolve(
        events.find((e) => e.type !== "ADDED" && e.at >= options.from && e.bytes === options.bytes),
      ),
    { description: options.description, timeoutMs: 180_000, intervalMs: 2 },
  );
}

async function measureFreshness(
  cluster: RunningCluster,
  options: { namespace: string; provisions: number; paceMs: number },
): Promise<Freshness> {
  const { namespace, provisions, paceMs } = options;
  await createNamespace(cluster.admin, namespace);
  const volumes = await watchVolumeAdds(cluster);
  const capacities = await watchCapacities(cluster);
  const result: Freshness = { fromVolume: [], fromCreateVolume: [] };
  try {
    for (let i = 0; i < provisions; i++) {
      const lastWrite = capacities.events.at(-1)?.at ?? 0;
      const pause = Math.max(0, lastWrite + paceMs - performance.now());
      await new Promise((resolve) => setTimeout(resolve, pause));
      const started = performance.now();
      const expected = POOL_BYTES - (await usedBytes(cluster)) - 100n * MiB;
      await createClaim(cluster, { namespace, name: `claim-${i}`, size: "100Mi" });
      const shown = await capacityShown(capacities.events, {
        bytes: expected,
        from: started,
        description: `capacity after provision ${i}`,
      });
      const volumeAt = await waitFor(
        () => Promise.resolve(volumes.added.get(`${namespace}/claim-${i}`)),
        { description: `PV of claim ${i}`, intervalMs: 2 },
      );
      const [call] = (await cluster.node(NODE).control.calls("CreateVolume")).slice(-1);
      const answeredAt = Date.parse(call!.time) + (call!.durationMs ?? 0);
      result.fromVolume.push(shown.at - volumeAt);
      result.fromCreateVolume.push(epochMs(shown.at) - answeredAt);
    }
  } finally {
    volumes.stop();
    capacities.stop();
  }
  return result;
}

async function measureBurst(
  cluster: RunningCluster,
  options: { namespace: string; claims: number },
): Promise<Burst> {
  const { namespace, claims } = options;
  await createNamespace(cluster.admin, namespace);
  const capacities = await watchCapacities(cluster);
  const control = cluster.node(NODE).control;
  const callsBefore = (await control.calls("GetCapacity")).length;
  try {
    const started = performance.now();
    const expected = POOL_BYTES - (await usedBytes(cluster)) - BigInt(claims) * 100n * MiB;
    await Promise.all(
      Array.from(
        { length: claims },
        (_, i) => createClaim(cluster, { namespace, name: `claim-${i}`, size: "100Mi" }),
      ),
    );
    const final = await capacityShown(capacities.events, {
      bytes: expected,
      from: started,
      description: "the final capacity after the burst",
    });
    await new Promise((resolve) => setTimeout(resolve, 3000)); // late writes count too
    const answered = (await control.calls("CreateVolume")).map((call) =>
      Date.parse(call.time) + (call.durationMs ?? 0)
    );
    return {
      claims,
      writes: capacities.events.filter((e) => e.type !== "ADDED" && e.at >= started).length,
      getCapacityCalls: (await control.calls("GetCapacity")).length - callsBefore,
      settleMs: epochMs(final.at) - Math.max(...answered),
    };
  } finally {
    capacities.stop();
  }
}

/** Starts the agent and waits for its first object; stops it and removes everything after. */
async function withAgent<T>(
  cluster: RunningCluster,
  kind: AgentKind,
  run: () => Promise<T>,
): Promise<T> {
  const agent = await cluster.startAgent(NODE, { kind, args: [...NODE_DEPLOYMENT_ARGS] });
  try {
    await waitFor(async () => (await allCapacities(cluster)).length === 1 || undefined, {
      description: `${kind}'s first CSIStorageCapacity`,
      timeoutMs: 60_000,
    });
    return await run();
  } finally {
    // The claims stay (each run has its own namespaces), so no volume is deleted during the
    // next run; only the objects go, so that the next agent starts from none as this one did.
    await agent.stop();
    await cluster.admin.storage.deleteCollectionNamespacedCSIStorageCapacity({
      namespace: cluster.agentNamespace,
    });
  }
}

function report(kind: AgentKind, freshness: Freshness, burst: Burst): void {
  const line = (label: string, values: number[]) =>
    console.log(
      `| ${kind} | ${label} | ${percentile(values, 50).toFixed(1)} | ${
        percentile(values, 99).toFixed(1)
      } | ${formatSummary(summarize(values))} |`,
    );
  line("PV appears → capacity updated (ms)", freshness.fromVolume);
  line("CreateVolume answered → capacity updated (ms)", freshness.fromCreateVolume);
  console.log(
    `| ${kind} | burst of ${burst.claims}: ${burst.writes} capacity writes, ${burst.getCapacityCalls} GetCapacity calls, final capacity ${
      burst.settleMs.toFixed(0)
    } ms after the last CreateVolume answer | | | |`,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args.filter((arg) => arg !== "--"),
    options: {
      provisions: { type: "string", default: "100" },
      burst: { type: "string", default: "100" },
      agents: { type: "string", default: "ours,upstream" },
      "pace-ms": { type: "string", default: "1500" },
    },
  });
  const kinds = values.agents.split(",") as AgentKind[];
  await using cluster = await startCluster({
    nodes: [NODE],
    driverOptions: { capacity: { fast: "1Ti" } },
  });
  const results: [AgentKind, Freshness, Burst][] = [];
  for (const kind of kinds) {
    console.error(
      `[bench] ${kind}: ${values.provisions} provisions, then a burst of ${values.burst}`,
    );
    const measured = await withAgent(cluster, kind, async () => {
      const freshness = await measureFreshness(cluster, {
        namespace: `freshness-${kind}`,
        provisions: Number(values.provisions),
        paceMs: Number(values["pace-ms"]),
      });
      const burst = await measureBurst(cluster, {
        namespace: `burst-${kind}`,
        claims: Number(values.burst),
      });
      return [freshness, burst] as const;
    });
    results.push([kind, ...measured]);
  }
  console.log("\n| agent | measure | p50 | p99 | median (min–max) |\n|---|---|---|---|---|");
  for (const [kind, freshness, burst] of results) report(kind, freshness, burst);
}

if (import.meta.main) await main();
