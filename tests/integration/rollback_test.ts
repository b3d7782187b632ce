/**
 * The rollback to upstream's sidecar of docs/rollback.md, run on a real cluster: this
 * agent publishes CSIStorageCapacity with --capacity-owner-node; it stops and
 * upstream csi-provisioner starts with csi-driver-host-path's distributed
 * flags (the owner is its Pod); upstream cannot update the Node-owned objects
 * until the page's commands run, then publishes its own within a minute.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { V1CSIStorageCapacity } from "@kubernetes/client-node";
import { NODE_DEPLOYMENT_ARGS } from "../cluster/agents.ts";
import { startCluster } from "../cluster/cluster.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import { commandsAfterMarker, kubectlArgs } from "./doc_commands.ts";
import { createFastClass, selectedClaim, step, waitForReady } from "./support.ts";

const CLASS = "rollback";
const NODE = "node-a";
/** What upstream's API server says when a second controller reference is added. */
const REFUSAL = "Only one reference can have Controller set to true";

function ownerKinds(object: V1CSIStorageCapacity): string[] {
  return (object.metadata?.ownerReferences ?? []).map((reference) => reference.kind);
}

async function classObjects(cluster: RunningCluster): Promise<V1CSIStorageCapacity[]> {
  const list = await cluster.admin.storage.listNamespacedCSIStorageCapacity({
    namespace: cluster.agentNamespace,
  });
  return list.items.filter((object) => object.storageClassName === CLASS);
}

Deno.test("rolling back to upstream's sidecar as docs/rollback.md says: upstream publishes within a minute", async (t) => {
  await using cluster = await startCluster({ nodes: [NODE], storageClasses: false });
  await createFastClass(cluster, CLASS);
  // The agent's Pod (POD_NAME), which upstream's --capacity-ownerref-level=0 makes the owner.
  await cluster.admin.core.createNamespacedPod({
    namespace: cluster.agentNamespace,
    body: {
      metadata: { name: `csi-provisioner-${NODE}` },
      spec: { nodeName: NODE, containers: [{ name: "csi-provisioner", image: "unused" }] },
    },
  });
  let published: V1CSIStorageCapacity | undefined;

  await step(t, cluster, "this agent publishes with --capacity-owner-node", async () => {
    const port = freeLoopbackPort();
    await cluster.startAgent(NODE, {
      kind: "ours",
      args: [...NODE_DEPLOYMENT_ARGS, "--capacity-owner-node", `--http-endpoint=127.0.0.1:${port}`],
    });
    await waitForReady(`http://127.0.0.1:${port}`);
    const objects = await classObjects(cluster);
    assert.equal(objects.length, 1);
    assert.deepEqual(ownerKinds(objects[0]!), ["Node"]);
    published = objects[0];
  });

  let upstreamStarted = 0;
  await step(t, cluster, "step 1: upstream's sidecar replaces it, and cannot update", async () => {
    await cluster.node(NODE).agent!.stop();
    upstreamStarted = Date.now();
    // csi-driver-host-path's distributed DaemonSet: --capacity-ownerref-level=0 (its Pod).
    const agent = await cluster.startAgent(NODE, {
      kind: "upstream",
      args: [...NODE_DEPLOYMENT_ARGS, "--capacity-ownerref-level=0"],
    });
    await waitFor(() => readFileSync(agent.logFile, "utf8").includes(REFUSAL), {
      description: "upstream's update refused",
      timeoutMs: 30_000,
    });
    const objects = await classObjects(cluster);
    assert.deepEqual(objects.map((object) => object.metadata?.uid), [published?.metadata?.uid]);
    assert.deepEqual(ownerKinds(objects[0]!), ["Node"], "still this agent's object");
  });

  let deleted = 0;
  await step(t, cluster, "step 2: the page's commands; upstream publishes", async () => {
    const values = { NAMESPACE: cluster.agentNamespace, DRIVER: cluster.driverName };
    const [remove, list] = commandsAfterMarker("docs/rollback.md", "rollback:capacity").map((
      words,
    ) => kubectlArgs(words, values));
    assert.ok(remove && list, "two commands");
    deleted = Date.now();
    await cluster.kubectl(remove);
    const first = await waitFor(async () => {
      const objects = await classObjects(cluster);
      return objects.find((object) => ownerKinds(object).includes("Pod"));
    }, { description: "an object of upstream's", timeoutMs: 60_000 });
    const publishedMs = Date.now() - deleted;
    console.log(
      `upstream's first object ${publishedMs} ms after the delete, ` +
        `${Date.now() - upstreamStarted} ms after upstream started`,
    );
    assert.equal(first.capacity, published?.capacity, "the driver's capacity, as before");
    // Upstream removes a duplicate it may create in the race with its own retries.
    await waitFor(async () => (await classObjects(cluster)).length === 1, {
      description: "one object for the class",
      timeoutMs: 60_000,
    });
    const table = await cluster.kubectl(list);
    assert.match(table, /OWNER/);
    assert.doesNotMatch(table, /\bNode\b/, table);
    assert.match(table, new RegExp(`${CLASS}\\s+\\S+\\s+Pod`), table);
  });

  await step(t, cluster, "upstream keeps its object up to date", async () => {
    const namespace = "rollback";
    await createNamespace(cluster.admin, namespace);
    const before = (await classObjects(cluster))[0]!;
    await cluster.admin.core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: selectedClaim("data", {
        node: NODE,
        storageClass: CLASS,
        size: "1Gi",
        driverName: cluster.driverName,
      }),
    });
    await waitForClaimBound(cluster.admin, { namespace, name: "data" });
    await waitFor(async () => {
      const objects = await classObjects(cluster);
      return objects.length === 1 && objects[0]!.metadata?.uid === before.metadata?.uid &&
        objects[0]!.capacity !== before.capacity;
    }, { description: "upstream's update after provisioning", timeoutMs: 60_000 });
  });
});
