/**
 * The two measurements of the capacity scenario, on a cluster where one agent
 * publishes capacity for node-a's class test-fast (pool of 1Ti, never full):
 *
 * - freshness: provisions one after the other, paced so that a 1 QPS write
 *   budget is not what is measured; for each, the time from the PV appearing
 *   (and from the driver's CreateVolume answer) to the CSIStorageCapacity
 *   showing the new free space, as a watch sees them;
 * - burst: claims at once; the capacity writes (and GetCapacity calls) the
 *   agent makes, and how long after the driver's last CreateVolume answer the
 *   published capacity is final.
 */
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { delay, waitFor } from "../tests/cluster/wait.ts";
import { createNamespace } from "../tests/cluster/workloads.ts";
import {
  type CapacityEvent,
  watchCapacities,
  watchVolumeAdds,
} from "../tests/integration/capacity_support.ts";
import { selectedClaim } from "../tests/integration/support.ts";

export const CAPACITY_NODE = "node-a";
export const CAPACITY_CLASS = "test-fast";
export const CAPACITY_POOL = "1Ti";
const POOL_BYTES = 1024n ** 4n;
const CLAIM_SIZE = "100Mi";
const CLAIM_BYTES = 100n * 1024n ** 2n;

export interface Freshness {
  /** From the PV appearing to the new capacity appearing, ms (negative: capacity first). */
  fromVolume: number[];
  /** From the driver's CreateVolume answer to the new capacity appearing, ms. */
  fromCreateVolume: number[];
}

export interface CapacityBurst {
  writes: number;
  getCapacityCalls: number;
  /** From the driver's last CreateVolume answer to the final capacity appearing, ms. */
  settleMs: number;
}

/** Wall-clock ms of a performance.now() reading, comparable with the driver's timestamps. */
const epochMs = (at: number) => performance.timeOrigin + at;

async function usedBytes(cluster: RunningCluster): Promise<bigint> {
  const [pool] = await cluster.node(CAPACITY_NODE).control.pools();
  return BigInt(pool?.usedBytes ?? 0);
}

async function createClaim(
  cluster: RunningCluster,
  target: { namespace: string; name: string },
): Promise<void> {
  await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: target.namespace,
    body: selectedClaim(target.name, {
      node: CAPACITY_NODE,
      storageClass: CAPACITY_CLASS,
      size: CLAIM_SIZE,
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

/** When the driver answered its last CreateVolume call so far (epoch ms). */
async function lastCreateVolumeAnswer(cluster: RunningCluster): Promise<number> {
  const calls = await cluster.node(CAPACITY_NODE).control.calls("CreateVolume");
  if (calls.length === 0) throw new Error("the driver recorded no CreateVolume call");
  return Math.max(...calls.map((call) => Date.parse(call.time) + (call.durationMs ?? 0)));
}

export async function measureFreshness(
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
      await delay(Math.max(0, lastWrite + paceMs - performance.now()));
      const started = performance.now();
      const expected = POOL_BYTES - (await usedBytes(cluster)) - CLAIM_BYTES;
      await createClaim(cluster, { namespace, name: `claim-${i}` });
      const shown = await capacityShown(capacities.events, {
        bytes: expected,
        from: started,
        description: `capacity after provision ${i}`,
      });
      const volumeAt = await waitFor(
        () => Promise.resolve(volumes.added.get(`${namespace}/claim-${i}`)),
        { description: `PV of claim ${i}`, intervalMs: 2 },
      );
      result.fromVolume.push(shown.at - volumeAt);
      result.fromCreateVolume.push(epochMs(shown.at) - await lastCreateVolumeAnswer(cluster));
    }
  } finally {
    volumes.stop();
    capacities.stop();
  }
  return result;
}

export async function measureCapacityBurst(
  cluster: RunningCluster,
  options: { namespace: string; claims: number },
): Promise<CapacityBurst> {
  const { namespace, claims } = options;
  await createNamespace(cluster.admin, namespace);
  const capacities = await watchCapacities(cluster);
  const control = cluster.node(CAPACITY_NODE).control;
  const callsBefore = (await control.calls("GetCapacity")).length;
  try {
    const started = performance.now();
    const expected = POOL_BYTES - (await usedBytes(cluster)) - BigInt(claims) * CLAIM_BYTES;
    await Promise.all(
      Array.from({ length: claims }, (_, i) => createClaim(cluster, { namespace, name: `c-${i}` })),
    );
    const final = await capacityShown(capacities.events, {
      bytes: expected,
      from: started,
      description: "the final capacity after the burst",
    });
    await delay(3_000); // late writes count too
    return {
      writes: capacities.events.filter((e) => e.type !== "ADDED" && e.at >= started).length,
      getCapacityCalls: (await control.calls("GetCapacity")).length - callsBefore,
      settleMs: epochMs(final.at) - await lastCreateVolumeAnswer(cluster),
    };
  } finally {
    capacities.stop();
  }
}
