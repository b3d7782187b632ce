/**
 * CSIStorageCapacity publishing on the real control plane, with the real
 * kube-scheduler placing pods by the published capacity (the cluster's
 * CSIDriver has storageCapacity: true) and the upstream hostpath driver on
 * each node: node-a's pool is 1Gi, node-b's 20Gi of which a volume made
 * behind the agents' back takes 10Gi, one compiled agent per node with
 * upstream's RBAC and no owner.
 */
import assert from "node:assert/strict";
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { startCluster } from "../cluster/cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createClaimAndPod, createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import { ANN_SELECTED_NODE, MANAGED_BY_LABEL } from "../../lib/model/keys.ts";
import {
  allCapacities,
  bytesOf,
  capacitiesOf,
  identity,
  metricValue,
  placedOn,
  startCapacityAgents,
  unschedulableReason,
  waitForCapacity,
  watchCapacities,
} from "./capacity_support.ts";
import { createVolumeCallsFor, scrape, step, waitForReady } from "./support.ts";

const Mi = 1024n ** 2n;
const Gi = 1024n * Mi;
const NS = "capacity";
const FAST = "csi-hostpath-fast";
/** A volume on node-b that no claim asked for: made and later deleted straight on the driver. */
const FOREIGN = "made-behind-the-agents-back";
/** Capacity is published within a second of a change, with room for a loaded 2-core machine; figures: bench/capacity.ts. */
const FRESHNESS_BOUND_MS = 1000;

const asMergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

Deno.test("capacity: the scheduler places pods by what the agents publish", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b"],
    driverOptions: {
      capacity: (node) => ({ fast: node === "node-a" ? "1Gi" : "20Gi" }),
      recordCalls: true,
    },
  });
  const { admin } = cluster;
  const foreign = await cluster.node("node-b").callDriver("Controller", "CreateVolume", {
    name: FOREIGN,
    capacity_range: { required_bytes: String(10n * Gi) },
    volume_capabilities: [{ mount: {}, access_mode: { mode: "SINGLE_NODE_WRITER" } }],
    parameters: { kind: "fast" },
  }) as { volume: { volume_id: string } };
  const agents = await startCapacityAgents(cluster, {
    args: ["--capacity-ownerref-level=-1", "--capacity-poll-interval=2s"],
  });
  await createNamespace(admin, NS);

  await step(
    t,
    cluster,
    "each agent publishes its own pool in upstream's object shape",
    async () => {
      const [a] = await capacitiesOf(cluster, "node-a", FAST);
      const [b] = await capacitiesOf(cluster, "node-b", FAST);
      assert.equal(bytesOf(a?.capacity), 1n * Gi);
      assert.equal(bytesOf(b?.capacity), 10n * Gi);
      assert.equal(bytesOf(a?.maximumVolumeSize), 1n * Gi, "the driver's maximum_volume_size");
      assert.match(a?.metadata?.name ?? "", /^csisc-[a-z0-9]{5}$/);
      assert.deepEqual(a?.metadata?.labels, {
        "csi.storage.k8s.io/drivername": cluster.driverName,
        [MANAGED_BY_LABEL]: "external-provisioner-node-a",
      });
      assert.deepEqual({ ...a?.nodeTopology }, {
        matchLabels: { "topology.hostpath.csi/node": "node-a" },
      });
      assert.equal(a?.metadata?.ownerReferences, undefined, "--capacity-ownerref-level=-1");
      const metrics = await scrape(agents.get("node-a")!);
      assert.equal(metricValue(metrics, "csistoragecapacities_desired_goal"), 1);
      assert.equal(metricValue(metrics, "csistoragecapacities_desired_current"), 1);
      assert.equal(metricValue(metrics, "csistoragecapacities_obsolete"), 0);
      assert.ok(
        (metricValue(
          metrics,
          `csistoragecapacities_last_publish_timestamp_seconds{storageclass="${FAST}"}`,
        ) ?? 0) > Date.now() / 1000 - 60,
      );
    },
  );

  await step(
    t,
    cluster,
    "a pod with a 5Gi claim lands on node-b, the only node it fits",
    async () => {
      await createClaimAndPod(admin, NS, { name: "big", storageClass: FAST, size: "5Gi" });
      assert.equal(await placedOn(cluster, NS, "big"), "node-b");
      const claim = await admin.core.readNamespacedPersistentVolumeClaim({
        namespace: NS,
        name: "big",
      });
      assert.deepEqual(
        await createVolumeCallsFor(cluster.node("node-a"), claim.metadata!.uid!),
        [],
      );
      await waitForCapacity(cluster, { node: "node-b", storageClass: FAST, bytes: 5n * Gi });
    },
  );

  await step(
    t,
    cluster,
    "filling node-b drops its published capacity within a second",
    async () => {
      const capacities = await watchCapacities(cluster);
      try {
        await createClaimAndPod(admin, NS, {
          name: "filler",
          storageClass: FAST,
          size: "4608Mi",
          node: "node-b",
        });
        const claim = await waitForClaimBound(admin, { namespace: NS, name: "filler" });
        const left = 10n * Gi - 5n * Gi - 4608n * Mi;
        await waitForCapacity(cluster, { node: "node-b", storageClass: FAST, bytes: left });
        // From the driver's answer (its pool changed then) to the change reaching a watcher.
        const [call] = await createVolumeCallsFor(cluster.node("node-b"), claim.metadata!.uid!);
        const answered = Date.parse(call!.time) + (call!.durationMs ?? 0);
        const published = capacities.events.find((e) => e.node === "node-b" && e.bytes === left)!;
        const lagMs = performance.timeOrigin + published.at - answered;
        console.log(`capacity visible ${lagMs.toFixed(0)} ms after CreateVolume answered`);
        assert.ok(lagMs < FRESHNESS_BOUND_MS, `published ${lagMs} ms after CreateVolume`);
        // The watch starts with an ADDED event for each existing object; the writes are MODIFIED.
        const writes = capacities.events.filter((e) => e.node === "node-b" && e.type !== "ADDED");
        assert.equal(writes.length, 1, "one write for one provision");
      } finally {
        capacities.stop();
      }
    },
  );

  await step(t, cluster, "the next pod goes to the node that still fits: node-a", async () => {
    await createClaimAndPod(admin, NS, { name: "small", storageClass: FAST, size: "800Mi" });
    assert.equal(await placedOn(cluster, NS, "small"), "node-a");
    const claim = await admin.core.readNamespacedPersistentVolumeClaim({
      namespace: NS,
      name: "small",
    });
    assert.deepEqual(await createVolumeCallsFor(cluster.node("node-b"), claim.metadata!.uid!), []);
  });

  await step(
    t,
    cluster,
    "a pod no node fits stays Pending with the scheduler's reason",
    async () => {
      await waitForCapacity(cluster, { node: "node-a", storageClass: FAST, bytes: 224n * Mi });
      await createClaimAndPod(admin, NS, { name: "waiting", storageClass: FAST, size: "900Mi" });
      const message = await unschedulableReason(cluster, NS, "waiting");
      assert.match(message, /2 node\(s\) did not have enough free storage/);
      const claim = await admin.core.readNamespacedPersistentVolumeClaim({
        namespace: NS,
        name: "waiting",
      });
      assert.equal(claim.metadata?.annotations?.[ANN_SELECTED_NODE], undefined);
    },
  );

  await step(
    t,
    cluster,
    "the poll sees node-b's pool grow, and the Pending pod is placed",
    async () => {
      // Nothing but the poll (2 s here) can see a volume deleted behind the agent's back; the
      // scheduler then places the pod at once, so the published 10.5Gi may last only a moment.
      await cluster.node("node-b").callDriver("Controller", "DeleteVolume", {
        volume_id: foreign.volume.volume_id,
      });
      assert.equal(await placedOn(cluster, NS, "waiting"), "node-b");
      await waitForCapacity(cluster, {
        node: "node-b",
        storageClass: FAST,
        bytes: 20n * Gi - 5n * Gi - 4608n * Mi - 900n * Mi,
      });
    },
  );

  await step(
    t,
    cluster,
    "someone else's edit is undone; a deleted object is re-created",
    async () => {
      const [a] = await capacitiesOf(cluster, "node-a", FAST);
      await admin.storage.patchNamespacedCSIStorageCapacity({
        namespace: cluster.agentNamespace,
        name: a!.metadata!.name!,
        body: { capacity: "1" },
      }, asMergePatch);
      await waitForCapacity(cluster, {
        node: "node-a",
        storageClass: FAST,
        bytes: 224n * Mi,
        timeoutMs: 5_000,
      });
      const [b] = await capacitiesOf(cluster, "node-b", FAST);
      await admin.storage.deleteNamespacedCSIStorageCapacity({
        namespace: cluster.agentNamespace,
        name: b!.metadata!.name!,
      });
      const recreated = await waitForCapacity(cluster, {
        node: "node-b",
        storageClass: FAST,
        bytes: bytesOf(b!.capacity),
        timeoutMs: 5_000,
      });
      assert.notEqual(recreated.metadata?.uid, b!.metadata?.uid);
    },
  );

  await step(
    t,
    cluster,
    "a duplicate made by someone else is deleted, the older object stays",
    async () => {
      const [a] = await capacitiesOf(cluster, "node-a", FAST);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // a younger creationTimestamp
      await admin.storage.createNamespacedCSIStorageCapacity({
        namespace: cluster.agentNamespace,
        body: {
          metadata: { generateName: "csisc-", labels: a!.metadata!.labels! },
          storageClassName: FAST,
          nodeTopology: a!.nodeTopology!,
          capacity: "5Gi",
        },
      });
      await waitFor(async () => {
        const objects = await capacitiesOf(cluster, "node-a", FAST);
        return objects.length === 1 && objects[0]!.metadata!.uid === a!.metadata!.uid;
      }, { description: "the duplicate deleted", timeoutMs: 5_000 });
    },
  );

  await step(
    t,
    cluster,
    "a new class gets objects, an Immediate one none; a deleted class's go",
    async () => {
      const classes: [string, string][] = [
        ["test-extra", "WaitForFirstConsumer"],
        ["test-now", "Immediate"],
      ];
      for (const [name, mode] of classes) {
        await admin.storage.createStorageClass({
          body: {
            metadata: { name },
            provisioner: cluster.driverName,
            parameters: { kind: "fast" },
            volumeBindingMode: mode,
          },
        });
      }
      await waitForCapacity(cluster, {
        node: "node-a",
        storageClass: "test-extra",
        bytes: 224n * Mi,
      });
      await waitForCapacity(cluster, {
        node: "node-b",
        storageClass: "test-extra",
        bytes: 15n * Gi - 4608n * Mi - 900n * Mi,
      });
      for (const url of agents.values()) {
        // Two desired classes: the Immediate one is left out (without the filter: three).
        assert.equal(metricValue(await scrape(url), "csistoragecapacities_desired_goal"), 2);
      }
      assert.deepEqual(
        (await allCapacities(cluster)).filter((o) => o.storageClassName === "test-now"),
        [],
      );
      await admin.storage.deleteStorageClass({ name: "test-extra" });
      await waitFor(
        async () =>
          (await allCapacities(cluster)).every((object) => object.storageClassName === FAST),
        { description: "test-extra's objects deleted", timeoutMs: 10_000 },
      );
    },
  );

  await step(
    t,
    cluster,
    "an agent restart keeps the same objects: same names, uids, no write",
    async () => {
      const before = (await capacitiesOf(cluster, "node-a")).map(identity).sort();
      await cluster.node("node-a").agent!.restart();
      await waitForReady(agents.get("node-a")!);
      const metrics = await scrape(agents.get("node-a")!);
      assert.equal(metricValue(metrics, "csistoragecapacities_desired_current"), 1);
      assert.doesNotMatch(metrics, /csistoragecapacities_writes_total\{/);
      assert.deepEqual((await capacitiesOf(cluster, "node-a")).map(identity).sort(), before);
    },
  );
});
