/**
 * Capacity withdrawn when a node's agent is gone, on the real control plane
 * with the hostpath driver and upstream's RBAC: four agents renew their
 * Leases (three watch them, the fourth reads the watchers'); a watcher is
 * killed for good and the fourth takes its place; once the Lease has expired
 * and --capacity-withdraw-after (20 s here) has passed, exactly one of the
 * other three deletes that node's CSIStorageCapacity objects (a Warning Event
 * CapacityWithdrawn on the Node, the counter), and kube-scheduler no longer
 * places a WaitForFirstConsumer claim pinned to that node; the agent,
 * started again, publishes by itself and the claim is provisioned there.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createClaimAndPod, createNamespace, waitForClaim } from "../cluster/workloads.ts";
import { ANN_SELECTED_NODE, DRIVER_NAME_LABEL } from "../../lib/model/keys.ts";
import { capacitiesOf, metricValue, startCapacityAgents } from "./capacity_support.ts";
import { scrape, step } from "./support.ts";

const NODES = ["node-a", "node-b", "node-c", "node-d"];
/** One of the three that watch the Leases (node-d, node-a, node-b): node-c, which reads theirs, takes over. */
const GONE = "node-a";
const OTHERS = NODES.filter((node) => node !== GONE);
const FAST = "csi-hostpath-fast";
const ARGS = ["--capacity-owner-node", "--capacity-withdraw-after=20s"];
const WITHDRAWN = "csi_node_provisioner_capacity_withdrawn_total";
const WORKLOADS = "withdraw";

/** The CapacityWithdrawn Events on the Node. */
async function withdrawalEvents(cluster: RunningCluster, node: string) {
  const list = await cluster.admin.core.listEventForAllNamespaces({
    fieldSelector: `involvedObject.kind=Node,involvedObject.name=${node},reason=CapacityWithdrawn`,
  });
  return list.items;
}

/** The driver's agents' Leases in the agents' namespace, by holder. */
async function leaseHolders(cluster: RunningCluster): Promise<string[]> {
  const list = await cluster.admin.coordination.listNamespacedLease({
    namespace: cluster.agentNamespace,
    labelSelector: `${DRIVER_NAME_LABEL}=${cluster.driverName}`,
  });
  return list.items.map((lease) => lease.spec?.holderIdentity ?? "").sort();
}

Deno.test("capacity withdrawn when a node's agent is gone, published again when it is back", async (t) => {
  await using cluster = await startCluster({ nodes: NODES });
  const agents = await startCapacityAgents(cluster, { args: ARGS });
  await createNamespace(cluster.admin, WORKLOADS);
  let published = 0;

  await step(
    t,
    cluster,
    "each agent renews a Lease and publishes its node's capacity",
    async () => {
      assert.deepEqual(await leaseHolders(cluster), NODES);
      published = (await capacitiesOf(cluster, GONE)).length;
      assert.ok(published > 0, "node-a publishes capacity");
    },
  );

  await step(
    t,
    cluster,
    "an agent killed for good: one other agent withdraws its capacity",
    async () => {
      await cluster.node(GONE).agent!.kill();
      await waitFor(async () => (await capacitiesOf(cluster, GONE)).length === 0, {
        description: "node-a's CSIStorageCapacity objects deleted",
        // Lease expiry (60 s), node-c's reads (30 s), its fresh view (60 s), the grace (20 s).
        timeoutMs: 240_000,
      });
      const events = await waitFor(async () => {
        const found = await withdrawalEvents(cluster, GONE);
        return found.length > 0 ? found : undefined;
      }, { description: "a CapacityWithdrawn Event on Node node-a", timeoutMs: 10_000 });
      assert.equal(events.length, 1, JSON.stringify(events.map((event) => event.message)));
      assert.equal(events[0]!.type, "Warning");
      assert.match(events[0]!.message ?? "", /node node-a has not renewed its Lease/);
      const counts = await Promise.all(
        OTHERS.map(async (node) => metricValue(await scrape(agents.get(node)!), WITHDRAWN) ?? 0),
      );
      assert.deepEqual(
        counts.sort(),
        [0, 0, published],
        "exactly one agent withdrew, every object",
      );
      for (const node of OTHERS) {
        assert.equal(
          (await capacitiesOf(cluster, node)).length,
          published,
          `${node} keeps its own`,
        );
      }
    },
  );

  await step(
    t,
    cluster,
    "kube-scheduler no longer places a claim pinned to that node",
    async () => {
      await createClaimAndPod(cluster.admin, WORKLOADS, {
        name: "on-a",
        storageClass: FAST,
        size: "1Gi",
        node: GONE,
      });
      await waitFor(async () => {
        const events = await cluster.admin.core.listNamespacedEvent({
          namespace: WORKLOADS,
          fieldSelector: "involvedObject.kind=Pod,involvedObject.name=on-a,reason=FailedScheduling",
        });
        return events.items.some((event) => /enough free storage/.test(event.message ?? ""));
      }, { description: "FailedScheduling for lack of storage", timeoutMs: 30_000 });
      const claim = await cluster.admin.core.readNamespacedPersistentVolumeClaim({
        namespace: WORKLOADS,
        name: "on-a",
      });
      assert.equal(claim.metadata?.annotations?.[ANN_SELECTED_NODE], undefined);
    },
  );

  await step(
    t,
    cluster,
    "the agent started again publishes by itself; the claim is provisioned",
    async () => {
      await cluster.node(GONE).agent!.restart();
      await waitFor(async () => (await capacitiesOf(cluster, GONE)).length === published, {
        description: "node-a's capacity published again",
        timeoutMs: 60_000,
      });
      assert.deepEqual(await leaseHolders(cluster), NODES);
      await waitForClaim(
        cluster.admin,
        { namespace: WORKLOADS, name: "on-a" },
        (claim) => claim.status?.phase === "Bound",
        { description: "claim Bound", timeoutMs: 120_000 },
      );
      assert.equal((await withdrawalEvents(cluster, GONE)).length, 1, "withdrawn once only");
      const logs = await Promise.all(
        NODES.map((node) => Deno.readTextFile(cluster.node(node).agent!.logFile)),
      );
      const reads = logs.map((log) => log.includes("Read the Lease watchers' Leases"));
      assert.deepEqual(reads, [false, false, true, false], "node-c read the watchers' Leases");
      assert.ok(logs.every((log) => !log.includes("Cannot withdraw")), "and no check failed");
    },
  );
});
