/**
 * Pins the real behaviour the agent must reproduce, observed with upstream
 * csi-provisioner (flags of the hostpath distributed deployment) and the
 * upstream hostpath driver on two fake nodes with different capacities, its
 * calls seen through the recording proxy.
 */

import assert from "node:assert/strict";
import { toBytes } from "../csi_driver/quantity.ts";
import { NODE_DEPLOYMENT_ARGS } from "./agents.ts";
import { startCluster } from "./cluster.ts";
import { waitFor, withTimeout } from "./wait.ts";
import {
  affinityNodes,
  capacitiesByNode,
  createClaimAndPod,
  createNamespace,
  forceDeletePod,
  waitForClaim,
  waitForClaimBound,
  watchVolume,
} from "./workloads.ts";
import { ANN_SELECTED_NODE } from "../../lib/model/keys.ts";

/** Upstream's distributed-deployment flags, with a short capacity poll and verbose logs. */
const AGENT_ARGS = [...NODE_DEPLOYMENT_ARGS, "--capacity-poll-interval=5s", "--v=5"];

const NAMESPACE = "smoke";
const CAPACITY: Record<string, string> = { "node-a": "2Gi", "node-b": "10Gi" };

Deno.test("upstream csi-provisioner in node mode against the real control plane", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b"],
    driverOptions: { capacity: (node) => ({ fast: CAPACITY[node] ?? "1Gi" }), recordCalls: true },
    agent: "upstream",
    agentArgs: AGENT_ARGS,
  });
  const { admin } = cluster;
  const capacityQuery = {
    namespace: cluster.agentNamespace,
    topologyKey: cluster.topologyKey,
    storageClass: "csi-hostpath-fast",
  };
  try {
    await createNamespace(admin, NAMESPACE);

    await t.step("each agent publishes a CSIStorageCapacity for its node", async () => {
      const byNode = await waitFor(async () => {
        const found = await capacitiesByNode(admin, capacityQuery);
        return found.size === 2 ? found : undefined;
      }, { description: "a CSIStorageCapacity per node", timeoutMs: 60_000 });
      for (const [node, size] of Object.entries(CAPACITY)) {
        assert.equal(toBytes(byNode.get(node)?.capacity ?? "0"), toBytes(size), node);
      }
    });

    let firstVolume = "";
    await t.step("the scheduler selects a node and the PV controller binds the claim", async () => {
      await createClaimAndPod(admin, NAMESPACE, {
        name: "first",
        storageClass: "csi-hostpath-fast",
        size: "1Gi",
      });
      const ref = { namespace: NAMESPACE, name: "first" };
      const selected = await waitForClaim(
        admin,
        ref,
        (c) => !!c.metadata?.annotations?.[ANN_SELECTED_NODE],
        {
          description: "selected-node annotation",
        },
      );
      const node = selected.metadata!.annotations![ANN_SELECTED_NODE]!;
      const bound = await waitForClaimBound(admin, ref);
      assert.equal(
        bound.metadata?.annotations?.["volume.kubernetes.io/storage-provisioner"],
        cluster.driverName,
      );
      firstVolume = bound.spec!.volumeName!;
      const pv = await admin.core.readPersistentVolume({ name: firstVolume });
      assert.deepEqual(affinityNodes(pv, cluster.topologyKey), [node]);
      assert.equal(pv.spec?.csi?.driver, cluster.driverName);
      assert.equal((await cluster.node(node).volumes()).length, 1);
      const pod = await waitFor(async () => {
        const pod = await admin.core.readNamespacedPod({ namespace: NAMESPACE, name: "first" });
        return pod.spec?.nodeName ? pod : undefined;
      }, { description: "pod first bound to a node" });
      assert.equal(pod.spec?.nodeName, node);
    });

    await t.step("a claim that does not fit node-a's capacity is placed on node-b", async () => {
      await createClaimAndPod(admin, NAMESPACE, {
        name: "big",
        storageClass: "csi-hostpath-fast",
        size: "5Gi",
      });
      const bound = await waitForClaimBound(admin, { namespace: NAMESPACE, name: "big" });
      assert.equal(bound.metadata?.annotations?.[ANN_SELECTED_NODE], "node-b");
      const pv = await admin.core.readPersistentVolume({ name: bound.spec!.volumeName! });
      assert.deepEqual(affinityNodes(pv, cluster.topologyKey), ["node-b"]);
      // Placed by published capacity, not by a failed attempt on node-a and a reschedule.
      const triedOnA = (await cluster.node("node-a").calls("CreateVolume"))
        .filter((call) => (call.request as { name?: string }).name === pv.metadata?.name);
      assert.deepEqual(triedOnA, []);
    });

    await t.step("published capacity follows provisioning", async () => {
      const volumes = await cluster.node("node-b").volumes();
      const used = volumes.reduce((sum, volume) => sum + volume.sizeBytes, 0);
      await waitFor(async () => {
        const capacity = (await capacitiesByNode(admin, capacityQuery)).get("node-b")?.capacity;
        return capacity !== undefined && toBytes(capacity) === toBytes("10Gi") - used;
      }, {
        description: "node-b's CSIStorageCapacity to drop by its used bytes",
        timeoutMs: 30_000,
      });
    });

    await t.step("an agent killed with SIGKILL and restarted provisions again", async () => {
      const agent = cluster.node("node-a").agent!;
      const before = agent.pid;
      assert.equal((await agent.kill()).signal, "SIGKILL");
      await agent.restart();
      assert.notEqual(agent.pid, before);
      assert.equal(agent.running, true);
      await createClaimAndPod(admin, NAMESPACE, {
        name: "after-restart",
        storageClass: "csi-hostpath-fast",
        size: "100Mi",
        node: "node-a",
      });
      const bound = await waitForClaimBound(admin, { namespace: NAMESPACE, name: "after-restart" });
      assert.equal(bound.metadata?.annotations?.[ANN_SELECTED_NODE], "node-a");
      assert.match(await Deno.readTextFile(agent.logFile), /===== cluster: restart #1/);
    });

    await t.step("deleting the claim makes the PV Released, then deleted", async () => {
      const history = await watchVolume(admin, firstVolume);
      try {
        await forceDeletePod(admin, NAMESPACE, "first");
        await admin.core.deleteNamespacedPersistentVolumeClaim({
          namespace: NAMESPACE,
          name: "first",
        });
        await withTimeout(history.deleted, {
          description: `PV ${firstVolume} deleted`,
          timeoutMs: 60_000,
        });
        assert.deepEqual(history.phases, ["Bound", "Released"]);
      } finally {
        history.stop();
      }
      const volumes = await Promise.all(cluster.nodes.map((node) => node.volumes()));
      assert.deepEqual(volumes.flat().map((volume) => volume.name).includes(firstVolume), false);
    });
  } catch (error) {
    console.error(await cluster.tailLogs(50));
    throw error;
  }
});
