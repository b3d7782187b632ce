/**
 * The steps of the RBAC end-to-end test's lifecycle, each a thing the agent
 * must be able to do on its node with deploy/'s permissions only. Claims
 * live in namespace WORKLOADS and use class CLASS (the cluster's
 * WaitForFirstConsumer class of the test driver's `fast` pool, 4Gi a node).
 */

import type { V1CSIStorageCapacity } from "@kubernetes/client-node";
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { TEST_DRIVER_NAME, TEST_TOPOLOGY_KEY } from "../cluster/nodes.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import {
  affinityNodes,
  capacitiesByNode,
  claimObject,
  forceDeletePod,
  podUsingClaim,
  waitForClaimBound,
} from "../cluster/workloads.ts";

export const WORKLOADS = "rbac-e2e";
export const CLASS = "test-fast";
const POOL = "4Gi";

export async function capacityOf(
  cluster: RunningCluster,
  storageClass: string,
): Promise<Map<string, V1CSIStorageCapacity>> {
  return await capacitiesByNode(cluster.admin, {
    namespace: cluster.agentNamespace,
    topologyKey: TEST_TOPOLOGY_KEY,
    storageClass,
  });
}

/** Published for every node, each object owned by its Node (--capacity-owner-node). */
export async function checkCapacityOwners(cluster: RunningCluster): Promise<void> {
  const byNode = await waitFor(async () => {
    const found = await capacityOf(cluster, CLASS);
    return found.size === cluster.nodes.length ? found : undefined;
  }, { description: "CSIStorageCapacity of every node" });
  for (const { name } of cluster.nodes) {
    const owner = byNode.get(name)?.metadata?.ownerReferences?.[0];
    deepStrictEqual([owner?.kind, owner?.name], ["Node", name]);
    strictEqual(String(byNode.get(name)?.capacity), POOL);
  }
}

/** A new class gets capacity objects on every node; removing it makes the agents delete them. */
export async function addAndRemoveClass(cluster: RunningCluster): Promise<void> {
  const name = "rbac-extra";
  await cluster.admin.storage.createStorageClass({
    body: {
      metadata: { name },
      provisioner: TEST_DRIVER_NAME,
      parameters: { kind: "fast" },
      volumeBindingMode: "WaitForFirstConsumer",
    },
  });
  const count = async () => (await capacityOf(cluster, name)).size;
  await waitFor(async () => (await count()) === cluster.nodes.length, {
    description: `capacity of class ${name} on every node`,
  });
  await cluster.admin.storage.deleteStorageClass({ name });
  await waitFor(async () => (await count()) === 0, {
    description: `capacity of deleted class ${name} removed`,
  });
}

/** Creates a 1Gi claim and a pod pinned to `node`; with `attributesClass` the claim names it. */
async function createClaim(
  cluster: RunningCluster,
  claim: string,
  options: { node: string; attributesClass?: string },
): Promise<string> {
  const body = claimObject(claim, { storageClass: CLASS, size: "1Gi" });
  if (options.attributesClass) body.spec!.volumeAttributesClassName = options.attributesClass;
  const created = await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: WORKLOADS,
    body,
  });
  await cluster.admin.core.createNamespacedPod({
    namespace: WORKLOADS,
    body: podUsingClaim(claim, claim, options.node),
  });
  return created.metadata!.uid!;
}

/** Provisions a claim on `node` and checks its PV's node affinity; returns the PV's name. */
export async function provisionOn(
  cluster: RunningCluster,
  claim: string,
  options: { node: string; attributesClass?: string },
): Promise<string> {
  await createClaim(cluster, claim, options);
  const bound = await waitForClaimBound(cluster.admin, { namespace: WORKLOADS, name: claim });
  const pvName = bound.spec!.volumeName!;
  const pv = await cluster.admin.core.readPersistentVolume({ name: pvName });
  deepStrictEqual(affinityNodes(pv, TEST_TOPOLOGY_KEY), [options.node]);
  return pvName;
}

async function deleteClaimAndPod(cluster: RunningCluster, claim: string): Promise<void> {
  await forceDeletePod(cluster.admin, WORKLOADS, claim);
  await cluster.admin.core.deleteNamespacedPersistentVolumeClaim({
    namespace: WORKLOADS,
    name: claim,
  });
}

/**
 * A claim deleted while its CreateVolume timed out: the agent reads the
 * claim again (a cache that still has it may be stale), asks the driver once
 * more with the same name, and deletes the volume it gets. No PV is made.
 */
export async function abandonTimedOutClaim(cluster: RunningCluster, node: string): Promise<void> {
  const { control } = cluster.node(node);
  // Three timeouts, retried after 1 s and 2 s: time enough to delete the claim in between.
  await control.setFault({ method: "CreateVolume", code: "DEADLINE_EXCEEDED", times: 3 });
  const uid = await createClaim(cluster, "abandoned", { node });
  const volumeName = `pvc-${uid}`;
  const calls = async () =>
    (await control.calls("CreateVolume")).filter((call) =>
      (call.request as { name?: string }).name === volumeName
    );
  await waitFor(async () => (await calls()).some((call) => call.codeName === "DEADLINE_EXCEEDED"), {
    description: `a timed-out CreateVolume of ${volumeName}`,
  });
  await deleteClaimAndPod(cluster, "abandoned");
  await waitFor(async () => {
    const created = (await calls()).some((call) => call.codeName === "OK");
    const volumes = await control.volumes();
    return created && !volumes.some((volume) => volume.name === volumeName);
  }, { description: `${volumeName} created at last and deleted`, timeoutMs: 30_000 });
  await control.clearFaults("CreateVolume");
}

/** Deletes the claims; the agents delete their volumes and PVs, and capacity is whole again. */
export async function deleteAndWaitGone(
  cluster: RunningCluster,
  volumes: { claim: string; pv: string }[],
): Promise<void> {
  for (const { claim } of volumes) await deleteClaimAndPod(cluster, claim);
  await waitFor(async () => {
    const existing = (await cluster.admin.core.listPersistentVolume()).items
      .map((pv) => pv.metadata!.name);
    return volumes.every(({ pv }) => !existing.includes(pv));
  }, { description: "the PVs deleted by the agents", timeoutMs: 60_000 });
  for (const node of cluster.nodes) deepStrictEqual(await node.control.volumes(), [], node.name);
  await waitFor(async () => {
    const byNode = await capacityOf(cluster, CLASS);
    return [...byNode.values()].every((object) => String(object.capacity) === POOL);
  }, { description: `capacity back to ${POOL} on every node` });
}
