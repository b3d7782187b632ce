/**
 * The steps of the RBAC end-to-end test's lifecycle, each a thing the agent
 * must be able to do on its node with deploy/'s permissions only. Claims
 * live in namespace WORKLOADS and use class CLASS (deploy/'s
 * WaitForFirstConsumer class of the hostpath driver's `fast` pool, 4Gi a node).
 */

import type { V1CSIStorageCapacity } from "@kubernetes/client-node";
import { deepStrictEqual, strictEqual } from "node:assert/strict";
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
import { ANN_SELECTED_NODE } from "../../lib/model/keys.ts";

export const WORKLOADS = "rbac-e2e";
export const CLASS = "csi-hostpath-fast";
const POOL = "4Gi";

export async function capacityOf(
  cluster: RunningCluster,
  storageClass: string,
): Promise<Map<string, V1CSIStorageCapacity>> {
  return await capacitiesByNode(cluster.admin, {
    namespace: cluster.agentNamespace,
    topologyKey: cluster.topologyKey,
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
      provisioner: cluster.driverName,
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
  deepStrictEqual(affinityNodes(pv, cluster.topologyKey), [options.node]);
  return pvName;
}

async function deleteClaimAndPod(cluster: RunningCluster, claim: string): Promise<void> {
  // An Immediate claim is provisioned with no pod.
  const pods = await cluster.admin.core.listNamespacedPod({
    namespace: WORKLOADS,
    fieldSelector: `metadata.name=${claim}`,
  });
  if (pods.items.length > 0) await forceDeletePod(cluster.admin, WORKLOADS, claim);
  await cluster.admin.core.deleteNamespacedPersistentVolumeClaim({
    namespace: WORKLOADS,
    name: claim,
  });
}

/**
 * A claim whose node turns out to be full (CreateVolume: ResourceExhausted)
 * goes back to the scheduler: the agent removes selected-node. `full`'s pool
 * is taken up by a volume made behind the agents' back, and the claim comes
 * selected to it (as by a scheduler that read the capacity just before);
 * once `full` publishes what it really has left, the space is freed again
 * (its capacity object stays stale until the next poll) and the claim's pod
 * is placed on `other`, where it is provisioned. Returns the PV's name.
 */
export async function rescheduledWhenFull(
  cluster: RunningCluster,
  claim: string,
  options: { full: string; other: string },
): Promise<string> {
  const full = cluster.node(options.full);
  const foreign = await full.callDriver("Controller", "CreateVolume", {
    name: "made-behind-the-agents-back",
    capacity_range: { required_bytes: String(2 * 1024 ** 3) },
    volume_capabilities: [{ mount: {}, access_mode: { mode: "SINGLE_NODE_WRITER" } }],
    parameters: { kind: "fast" },
  }) as { volume: { volume_id: string } };
  const body = claimObject(claim, { storageClass: CLASS, size: "3Gi" });
  body.metadata!.annotations = { [ANN_SELECTED_NODE]: options.full };
  const created = await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: WORKLOADS,
    body,
  });
  await waitFor(async () => {
    const current = await cluster.admin.core.readNamespacedPersistentVolumeClaim({
      namespace: WORKLOADS,
      name: claim,
    });
    return current.metadata?.annotations?.[ANN_SELECTED_NODE] === undefined;
  }, { description: `${claim} sent back to the scheduler by ${options.full}'s agent` });
  const [refused] = await createVolumeCalls(cluster, options.full, `pvc-${created.metadata!.uid}`);
  strictEqual(refused?.codeName, "RESOURCE_EXHAUSTED");
  await waitFor(
    async () => String((await capacityOf(cluster, CLASS)).get(options.full)?.capacity) === "2Gi",
    { description: `${options.full} publishing the 2Gi it has left` },
  );
  await full.callDriver("Controller", "DeleteVolume", { volume_id: foreign.volume.volume_id });
  await cluster.admin.core.createNamespacedPod({
    namespace: WORKLOADS,
    body: podUsingClaim(claim, claim),
  });
  const bound = await waitForClaimBound(cluster.admin, { namespace: WORKLOADS, name: claim });
  const pv = await cluster.admin.core.readPersistentVolume({ name: bound.spec!.volumeName! });
  deepStrictEqual(affinityNodes(pv, cluster.topologyKey), [options.other]);
  return pv.metadata!.name!;
}

/**
 * A claim of an Immediate class, with no pod: the agents race for it (the
 * merge patch of selected-node, a "Needed only" grant). `full` has no room
 * left, so its agent declines and `other` owns and provisions it. Returns
 * the PV's name.
 */
export async function racedForImmediateClaim(
  cluster: RunningCluster,
  claim: string,
  options: { full: string; other: string },
): Promise<string> {
  await cluster.admin.storage.createStorageClass({
    body: {
      metadata: { name: "rbac-immediate" },
      provisioner: cluster.driverName,
      parameters: { kind: "fast" },
      volumeBindingMode: "Immediate",
    },
  });
  await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: WORKLOADS,
    body: claimObject(claim, { storageClass: "rbac-immediate", size: "1Gi" }),
  });
  const bound = await waitForClaimBound(cluster.admin, { namespace: WORKLOADS, name: claim });
  strictEqual(bound.metadata?.annotations?.[ANN_SELECTED_NODE], options.other);
  const pv = await cluster.admin.core.readPersistentVolume({ name: bound.spec!.volumeName! });
  deepStrictEqual(affinityNodes(pv, cluster.topologyKey), [options.other]);
  strictEqual((await createVolumeCalls(cluster, options.full, pv.metadata!.name!)).length, 0);
  return pv.metadata!.name!;
}

async function createVolumeCalls(cluster: RunningCluster, node: string, volumeName: string) {
  return (await cluster.node(node).calls("CreateVolume")).filter((call) =>
    (call.request as { name?: string }).name === volumeName
  );
}

/**
 * A claim deleted while its CreateVolume times out: the node's driver is
 * frozen (SIGSTOP), so the calls hang until the agent's --timeout; after two
 * timeouts (the second a repeated Event, patched) the claim and its pod are
 * deleted. Once the claim is gone, the agent reads it again (a cache that
 * still has it may be stale) and asks the driver once more with the same
 * name; only that call finds the driver thawed (an attempt still hanging when
 * the claim went would otherwise succeed and make a PV for a gone claim,
 * upstream's way, which the delete path cleans up). The agent deletes the
 * volume it gets. No PV is made.
 */
export async function abandonTimedOutClaim(cluster: RunningCluster, node: string): Promise<void> {
  const driver = cluster.node(node);
  driver.freezeDriver();
  let volumeName = "";
  try {
    const uid = await createClaim(cluster, "abandoned", { node });
    volumeName = `pvc-${uid}`;
    await waitFor(async () => {
      const calls = await createVolumeCalls(cluster, node, volumeName);
      return calls.filter((call) => call.codeName === "DEADLINE_EXCEEDED").length >= 2;
    }, { description: `two timed-out CreateVolume calls of ${volumeName}`, timeoutMs: 60_000 });
    await deleteClaimAndPod(cluster, "abandoned");
    await waitFor(async () => {
      const list = await cluster.admin.core.listNamespacedPersistentVolumeClaim({
        namespace: WORKLOADS,
        fieldSelector: "metadata.name=abandoned",
      });
      return list.items.length === 0;
    }, { description: "claim abandoned gone (pvc-protection lifted)" });
    const goneAt = Date.now();
    await waitFor(async () => {
      const calls = await createVolumeCalls(cluster, node, volumeName);
      return calls.some((call) => Date.parse(call.time) > goneAt);
    }, { description: `the CreateVolume of ${volumeName} for a gone claim`, timeoutMs: 60_000 });
  } finally {
    driver.thawDriver();
  }
  await waitFor(async () => {
    const calls = await createVolumeCalls(cluster, node, volumeName);
    const created = calls.some((call) => call.codeName === "OK");
    const volumes = await driver.volumes();
    return created && !volumes.some((volume) => volume.name === volumeName);
  }, { description: `${volumeName} created at last and deleted`, timeoutMs: 60_000 });
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
  for (const node of cluster.nodes) deepStrictEqual(await node.volumes(), [], node.name);
  await waitFor(async () => {
    const byNode = await capacityOf(cluster, CLASS);
    return [...byNode.values()].every((object) => String(object.capacity) === POOL);
  }, { description: `capacity back to ${POOL} on every node` });
}
