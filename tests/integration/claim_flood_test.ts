/**
 * A tenant's claims cost an agent only what it may act on, on the real
 * control plane: 300 Pending claims of another driver's class, with 50 KiB of
 * annotations each, arrive at a running agent and are there when it starts
 * again. Its memory (process_resident_memory_bytes and the JS heap from its
 * /metrics) grows by at most a few MiB either way.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { delay } from "../cluster/wait.ts";
import { createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import { scrape, selectedClaim, startOurAgents, step, waitForReady } from "./support.ts";

const CLAIMS = 300;
const ANNOTATION_BYTES = 50 * 1024;
/** Growth that fails: the claims' annotations alone are 15 MiB. */
const MAX_GROWTH_MIB = 8;
const OTHER_CLASS = "elsewhere";
const MIB = 1024 * 1024;

/** The agent's memory as /metrics reports it, in MiB. */
async function memory(url: string): Promise<{ rss: number; heap: number }> {
  const text = await scrape(url);
  const value = (name: string) => {
    const line = text.split("\n").find((candidate) => candidate.startsWith(`${name} `));
    assert.ok(line !== undefined, `${name} in /metrics`);
    return Number(line.split(" ")[1]) / MIB;
  };
  return {
    rss: value("process_resident_memory_bytes"),
    heap: value("nodejs_heap_size_used_bytes"),
  };
}

/**
 * The lowest of readings a second apart: the heap between collections holds
 * garbage, and RSS settles as the allocator returns pages.
 */
async function settled(url: string, seconds = 15): Promise<{ rss: number; heap: number }> {
  let low = await memory(url);
  for (let second = 1; second < seconds; second++) {
    await delay(1000);
    const now = await memory(url);
    low = { rss: Math.min(low.rss, now.rss), heap: Math.min(low.heap, now.heap) };
  }
  return low;
}

async function createFlood(cluster: RunningCluster, namespace: string): Promise<void> {
  const notes = "n".repeat(ANNOTATION_BYTES);
  const create = (index: number) =>
    cluster.admin.core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: `flood-${index}`, annotations: { "tenant.example/notes": notes } },
        spec: {
          accessModes: ["ReadWriteOnce"],
          storageClassName: OTHER_CLASS,
          resources: { requests: { storage: "1Gi" } },
        },
      },
    });
  for (let start = 0; start < CLAIMS; start += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, CLAIMS - start) }, (_, i) => create(start + i)),
    );
  }
}

/** A claim of the driver's class, Bound once the agent has read every claim event before it. */
async function provisionMarker(cluster: RunningCluster, namespace: string, name: string) {
  await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: selectedClaim(name, {
      node: "node-a",
      storageClass: "test-fast",
      driverName: cluster.driverName,
    }),
  });
  await waitForClaimBound(cluster.admin, { namespace, name });
}

function report(what: string, before: { rss: number; heap: number }, after: typeof before) {
  const growth = { rss: after.rss - before.rss, heap: after.heap - before.heap };
  console.log(
    `${what}: RSS ${before.rss.toFixed(1)} → ${after.rss.toFixed(1)} MiB ` +
      `(${growth.rss.toFixed(1)}), heap ${before.heap.toFixed(1)} → ${after.heap.toFixed(1)} MiB ` +
      `(${growth.heap.toFixed(1)})`,
  );
  return growth;
}

Deno.test("300 claims of another class with 50 KiB of annotations each grow the agent by at most a few MiB", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a"],
    driver: "test",
    storageCapacity: false,
  });
  await cluster.admin.storage.createStorageClass({
    body: {
      metadata: { name: OTHER_CLASS },
      provisioner: "other.csi.example.com",
      volumeBindingMode: "WaitForFirstConsumer",
    },
  });
  await createNamespace(cluster.admin, "tenant");
  const urls = await startOurAgents(cluster, { nodes: ["node-a"] });
  const url = urls.get("node-a")!;
  await provisionMarker(cluster, "tenant", "warm-up");
  const idle = await settled(url);

  await step(t, cluster, "claims arriving at a running agent", async () => {
    await createFlood(cluster, "tenant");
    await provisionMarker(cluster, "tenant", "after-flood");
    const growth = report("watch", idle, await settled(url));
    assert.ok(growth.heap < MAX_GROWTH_MIB, `heap grew ${growth.heap.toFixed(1)} MiB`);
    assert.ok(growth.rss < MAX_GROWTH_MIB, `RSS grew ${growth.rss.toFixed(1)} MiB`);
  });

  await step(t, cluster, "the same claims listed at start-up", async () => {
    await cluster.node("node-a").agent!.restart();
    await waitForReady(url);
    await provisionMarker(cluster, "tenant", "after-restart");
    const growth = report("start-up list", idle, await settled(url));
    assert.ok(growth.heap < MAX_GROWTH_MIB, `heap grew ${growth.heap.toFixed(1)} MiB`);
    assert.ok(growth.rss < MAX_GROWTH_MIB, `RSS grew ${growth.rss.toFixed(1)} MiB`);
  });
});
