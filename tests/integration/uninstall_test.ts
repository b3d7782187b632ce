/**
 * docs/uninstalling.md on a real cluster: once the agent is gone, what the
 * page says is left behind is there (the Node-owned CSIStorageCapacity
 * objects, the agent's Lease, the PV's finalizer and labels), and the page's
 * commands, read from the page, remove each of them.
 */
import assert from "node:assert/strict";
import type { V1PersistentVolume } from "@kubernetes/client-node";
import { NODE_DEPLOYMENT_ARGS } from "../cluster/agents.ts";
import { startCluster } from "../cluster/cluster.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import { PV_PROTECTION_FINALIZER } from "../../lib/model/keys.ts";
import { commandsAfterMarker, kubectlArgs } from "./doc_commands.ts";
import { createFastClass, selectedClaim, step, waitForReady } from "./support.ts";

const CLASS = "uninstall";
const NODE = "node-a";
const NAMESPACE = "uninstall";
const PAGE = "docs/uninstalling.md";
const DRIVER_LABEL = "csi.storage.k8s.io/drivername";
const MANAGED_BY_LABEL = "csi.storage.k8s.io/managed-by";

/** The page's commands after `marker`, with the cluster's names in place of its placeholders. */
function pageCommands(cluster: RunningCluster, marker: string, pv = "PV"): string[][] {
  const values = { NAMESPACE: cluster.agentNamespace, DRIVER: cluster.driverName, PV: pv };
  return commandsAfterMarker(PAGE, marker).map((words) => kubectlArgs(words, values));
}

async function driverObjects(
  cluster: RunningCluster,
): Promise<{ capacities: number; leases: number }> {
  const selector = `${DRIVER_LABEL}=${cluster.driverName}`;
  const namespace = cluster.agentNamespace;
  const [capacities, leases] = await Promise.all([
    cluster.admin.storage.listNamespacedCSIStorageCapacity({ namespace, labelSelector: selector }),
    cluster.admin.coordination.listNamespacedLease({ namespace, labelSelector: selector }),
  ]);
  return { capacities: capacities.items.length, leases: leases.items.length };
}

async function readPv(cluster: RunningCluster, name: string): Promise<V1PersistentVolume> {
  return await cluster.admin.core.readPersistentVolume({ name });
}

Deno.test("uninstalling as docs/uninstalling.md says: what is left behind, and its commands remove it", async (t) => {
  await using cluster = await startCluster({ nodes: [NODE], storageClasses: false });
  await createFastClass(cluster, CLASS);
  let pvName = "";

  await step(t, cluster, "the agent provisions a claim and is uninstalled", async () => {
    const port = freeLoopbackPort();
    await cluster.startAgent(NODE, {
      kind: "ours",
      args: [...NODE_DEPLOYMENT_ARGS, "--capacity-owner-node", `--http-endpoint=127.0.0.1:${port}`],
    });
    await waitForReady(`http://127.0.0.1:${port}`);
    await createNamespace(cluster.admin, NAMESPACE);
    await cluster.admin.core.createNamespacedPersistentVolumeClaim({
      namespace: NAMESPACE,
      body: selectedClaim("data", {
        node: NODE,
        storageClass: CLASS,
        driverName: cluster.driverName,
      }),
    });
    const claim = await waitForClaimBound(cluster.admin, { namespace: NAMESPACE, name: "data" });
    pvName = claim.spec!.volumeName!;
    // The agent renews its Lease at start-up; wait for it before the agent goes.
    await waitFor(async () => (await driverObjects(cluster)).leases === 1, {
      description: "the agent's Lease",
      timeoutMs: 30_000,
    });
    await cluster.node(NODE).agent!.stop();
  });

  await step(
    t,
    cluster,
    "left behind: capacity, the Lease, the PV's finalizer and labels",
    async () => {
      assert.deepEqual(await driverObjects(cluster), { capacities: 1, leases: 1 });
      const pv = await readPv(cluster, pvName);
      assert.ok(pv.metadata?.finalizers?.includes(PV_PROTECTION_FINALIZER), "the PV's finalizer");
      assert.equal(pv.metadata?.labels?.[DRIVER_LABEL], cluster.driverName);
      assert.ok(pv.metadata?.labels?.[MANAGED_BY_LABEL], "the managed-by label");
    },
  );

  await step(
    t,
    cluster,
    "the page's commands remove the capacity objects and the Lease",
    async () => {
      for (const command of pageCommands(cluster, "uninstall:capacity")) {
        await cluster.kubectl(command);
      }
      assert.deepEqual(await driverObjects(cluster), { capacities: 0, leases: 0 });
    },
  );

  await step(
    t,
    cluster,
    "the page's commands list the PV and remove its finalizer and labels",
    async () => {
      const [list] = pageCommands(cluster, "uninstall:pvs");
      const listed = await cluster.kubectl(list!);
      assert.match(listed, new RegExp(`^${pvName}\\tBound\\t.*${PV_PROTECTION_FINALIZER}`, "m"));
      await cluster.admin.core.deleteNamespacedPersistentVolumeClaim({
        namespace: NAMESPACE,
        name: "data",
      });
      await waitFor(async () => (await readPv(cluster, pvName)).status?.phase === "Released", {
        description: "the PV Released, with no agent to delete it",
        timeoutMs: 60_000,
      });
      const [patch] = pageCommands(cluster, "uninstall:pv-finalizer", pvName);
      await cluster.kubectl(patch!);
      const [label] = pageCommands(cluster, "uninstall:pv-labels");
      await cluster.kubectl(label!);
      const pv = await readPv(cluster, pvName);
      assert.ok(!pv.metadata?.finalizers?.includes(PV_PROTECTION_FINALIZER), "finalizer removed");
      assert.ok(!pv.metadata?.deletionTimestamp, "the PV itself stays, for its volume");
      assert.equal(pv.metadata?.labels?.[DRIVER_LABEL], undefined);
      assert.equal(pv.metadata?.labels?.[MANAGED_BY_LABEL], undefined);
    },
  );
});
