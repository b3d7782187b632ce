/**
 * This project's agent on democratic-csi's local-hostpath driver, a second
 * real node-local driver that answers unlike hostpath: CreateVolume says
 * capacity_bytes 0 (the PV then gets the requested size, as upstream
 * writes it), the volume id is the volume name, GetCapacity is the free
 * space of the filesystem, and snapshots and clones are directory copies.
 * Two nodes, a recording proxy in front of each driver, the snapshot
 * controllers, and the agent with the flags of democratic-csi's chart.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startCluster } from "../cluster/cluster.ts";
import type { ClusterNode } from "../cluster/cluster_node.ts";
import {
  DEMOCRATIC_SNAPSHOT_CLASS,
  DEMOCRATIC_STORAGE_CLASS,
  DEMOCRATIC_TOPOLOGY_KEY,
} from "../cluster/democratic.ts";
import { runCommand } from "../cluster/process.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import {
  createVolumeSnapshot,
  readSnapshotObject,
  waitForSnapshotReady,
} from "../cluster/snapshots.ts";
import { waitFor, withTimeout } from "../cluster/wait.ts";
import {
  affinityNodes,
  capacitiesByNode,
  claimObject,
  createNamespace,
  forceDeletePod,
  waitForClaimBound,
  watchVolume,
} from "../cluster/workloads.ts";
import { bytesOf } from "./capacity_support.ts";
import { createClaimOn, createPodOn, misplacedIsExplained } from "./snapshot_support.ts";
import { createVolumeCallsFor, startOurAgents, step, waitForClaimEvent } from "./support.ts";

const NS = "democratic";
const IMMEDIATE_CLASS = "democratic-immediate";
const HELLO = "written on node-a before the snapshot\n";
/**
 * The externalProvisioner args of the chart's examples/local-hostpath.yaml,
 * with no capacity owner (no agent Pod exists here), a short capacity poll
 * and a short Immediate race.
 */
const AGENT_ARGS = [
  "--feature-gates=Topology=true",
  "--strict-topology=true",
  "--enable-capacity=true",
  "--capacity-ownerref-level=-1",
  "--node-deployment-immediate-binding=true",
  "--capacity-poll-interval=2s",
  "--retry-interval-start=200ms",
  "--retry-interval-max=2s",
  "--node-deployment-base-delay=200ms",
  "--node-deployment-max-delay=2s",
  "-v=4",
];

/** The bound claim's PV. */
async function boundVolume(cluster: RunningCluster, name: string) {
  const claim = await waitForClaimBound(cluster.admin, { namespace: NS, name });
  const pv = await cluster.admin.core.readPersistentVolume({ name: claim.spec!.volumeName! });
  return { claim, pv };
}

/** The available_capacity of every GetCapacity the node's driver answered, in bytes. */
async function answeredCapacities(node: ClusterNode): Promise<bigint[]> {
  return (await node.calls("GetCapacity"))
    .map((call) => (call.response as { available_capacity?: string } | null)?.available_capacity)
    .filter((value): value is string => value !== undefined)
    .map((value) => BigInt(value));
}

/** `df`'s free bytes of the filesystem holding `dir`. */
async function freeBytes(dir: string): Promise<bigint> {
  const output = await runCommand("df", ["--block-size=1", "--output=avail", dir]);
  return BigInt(output.split("\n")[1]!.trim());
}

/**
 * The claim's PV: on node-a, with the file written before the snapshot, and
 * nothing on node-b (or only the empty directory a failed CreateVolume left).
 */
async function assertCopyOnNodeA(
  cluster: RunningCluster,
  name: string,
  options: { emptyDirOnNodeB?: boolean } = {},
): Promise<void> {
  const { pv } = await boundVolume(cluster, name);
  assert.deepEqual(affinityNodes(pv, DEMOCRATIC_TOPOLOGY_KEY), ["node-a"]);
  assert.equal(pv.spec?.capacity?.storage, "1Gi");
  const handle = pv.spec!.csi!.volumeHandle;
  assert.equal(handle, pv.metadata!.name);
  const dir = cluster.node("node-a").volumePath(handle);
  assert.equal(await Deno.readTextFile(join(dir, "hello.txt")), HELLO);
  const onNodeB = cluster.node("node-b").volumePath(handle);
  if (options.emptyDirOnNodeB) assert.deepEqual([...Deno.readDirSync(onNodeB)], []);
  else assert.equal(existsSync(onNodeB), false);
}

/** misplacedIsExplained() in the democratic class, the copy checked by assertCopyOnNodeA(). */
function misplaced(
  cluster: RunningCluster,
  options: {
    name: string;
    dataSource: { kind: "VolumeSnapshot" | "PersistentVolumeClaim"; name: string };
    message: RegExp;
  },
): Promise<void> {
  return misplacedIsExplained(cluster, {
    ...options,
    namespace: NS,
    storageClass: DEMOCRATIC_STORAGE_CLASS,
    madeOnNodeA: (name) => assertCopyOnNodeA(cluster, name),
  });
}

Deno.test("the agent on democratic-csi: provisioning, deletion, capacity, Immediate race, restores, clones", async (t) => {
  await using cluster = await startCluster({
    driver: "democratic",
    nodes: ["node-a", "node-b"],
    driverOptions: { recordCalls: true },
    snapshots: true,
  });
  const { admin } = cluster;
  await createNamespace(admin, NS);
  await startOurAgents(cluster, { args: AGENT_ARGS, rbac: "upstream" });
  const [nodeA, nodeB] = [cluster.node("node-a"), cluster.node("node-b")];
  let dataHandle = "";

  await step(t, cluster, "each node publishes the free space its driver answers", async () => {
    const byNode = await waitFor(async () => {
      const found = await capacitiesByNode(admin, {
        namespace: cluster.agentNamespace,
        topologyKey: DEMOCRATIC_TOPOLOGY_KEY,
        storageClass: DEMOCRATIC_STORAGE_CLASS,
      });
      return found.size === 2 ? found : undefined;
    }, { description: "a CSIStorageCapacity per node for democratic-local", timeoutMs: 30_000 });
    for (const node of cluster.nodes) {
      const published = byNode.get(node.name)!;
      const bytes = bytesOf(published.capacity);
      // The free space moves with every write on the machine: the published value
      // is one the driver answered, not a constant, and close to what df says now.
      assert.ok((await answeredCapacities(node)).includes(bytes), `${node.name}: ${bytes}`);
      const free = await freeBytes(node.stateDir);
      assert.ok(bytes > free * 95n / 100n && bytes < free * 105n / 100n, `${bytes} vs df ${free}`);
      assert.equal(published.maximumVolumeSize, undefined);
    }
  });

  await step(
    t,
    cluster,
    "a WaitForFirstConsumer claim on node-a: provisioned there with the requested size",
    async () => {
      const claim = await createClaimOn(cluster, {
        namespace: NS,
        name: "data",
        node: "node-a",
        storageClass: DEMOCRATIC_STORAGE_CLASS,
      });
      const { pv } = await boundVolume(cluster, "data");
      dataHandle = pv.spec!.csi!.volumeHandle;
      // democratic-csi answers capacity_bytes 0; upstream then writes the request.
      const [call] = await createVolumeCallsFor(nodeA, claim.metadata!.uid!);
      assert.equal(
        (call?.response as { volume: { capacity_bytes: string } }).volume.capacity_bytes,
        "0",
      );
      assert.equal(pv.spec?.capacity?.storage, "1Gi");
      // It reports SINGLE_NODE_MULTI_WRITER, so ReadWriteOnce is asked as that (as upstream maps it).
      const request = call!.request as {
        volume_capabilities: { access_mode: { mode: string } }[];
        accessibility_requirements: { requisite: { segments: Record<string, string> }[] };
      };
      assert.deepEqual(
        request.volume_capabilities.map((capability) => capability.access_mode.mode),
        ["SINGLE_NODE_MULTI_WRITER"],
      );
      assert.deepEqual(request.accessibility_requirements.requisite, [
        { segments: { [DEMOCRATIC_TOPOLOGY_KEY]: "node-a" } },
      ]);
      assert.equal(dataHandle, `pvc-${claim.metadata!.uid}`);
      assert.equal(dataHandle, pv.metadata!.name);
      assert.deepEqual(affinityNodes(pv, DEMOCRATIC_TOPOLOGY_KEY), ["node-a"]);
      assert.equal(pv.spec?.csi?.driver, cluster.driverName);
      assert.equal(pv.spec?.csi?.volumeAttributes?.path, nodeA.volumePath(dataHandle));
      assert.equal(
        pv.metadata?.annotations?.["pv.kubernetes.io/provisioned-by"],
        cluster.driverName,
      );
      assert.equal(pv.spec?.persistentVolumeReclaimPolicy, "Delete");
      assert.ok(existsSync(nodeA.volumePath(dataHandle)));
      assert.deepEqual((await nodeA.volumes()).map((volume) => volume.id), [dataHandle]);
      assert.deepEqual(await nodeB.volumes(), []);
      assert.deepEqual(await createVolumeCallsFor(nodeB, claim.metadata!.uid!), []);
      const event = await waitForClaimEvent(cluster, { namespace: NS, name: "data" }, {
        reason: "ProvisioningSucceeded",
      });
      assert.equal(event.message, `Successfully provisioned volume ${dataHandle}`);
      assert.match(event.source?.component ?? "", /^org\.democratic-csi\.local-hostpath_/);
    },
  );

  await step(t, cluster, "a snapshot of it, restored on node-a with the file", async () => {
    await Deno.writeTextFile(join(nodeA.volumePath(dataHandle), "hello.txt"), HELLO);
    await createVolumeSnapshot(admin, {
      namespace: NS,
      name: "data-snap",
      claim: "data",
      snapshotClass: DEMOCRATIC_SNAPSHOT_CLASS,
    });
    const snapshot = await waitForSnapshotReady(admin, { namespace: NS, name: "data-snap" });
    const content = await readSnapshotObject<{ status: { snapshotHandle: string } }>(admin, {
      kind: "VolumeSnapshotContent",
      name: snapshot.status!.boundVolumeSnapshotContentName!,
    });
    const [copy] = await nodeA.democraticSnapshots();
    assert.equal(content.status.snapshotHandle, copy?.id);
    assert.equal(await Deno.readTextFile(join(copy!.path, "hello.txt")), HELLO);
    await createClaimOn(cluster, {
      namespace: NS,
      name: "restored",
      node: "node-a",
      storageClass: DEMOCRATIC_STORAGE_CLASS,
      dataSource: { kind: "VolumeSnapshot", name: "data-snap" },
    });
    await assertCopyOnNodeA(cluster, "restored");
  });

  await step(t, cluster, "a clone of it, on node-a with the file", async () => {
    await createClaimOn(cluster, {
      namespace: NS,
      name: "cloned",
      node: "node-a",
      storageClass: DEMOCRATIC_STORAGE_CLASS,
      dataSource: { kind: "PersistentVolumeClaim", name: "data" },
    });
    await assertCopyOnNodeA(cluster, "cloned");
    assert.deepEqual(await nodeB.volumes(), []);
  });

  await step(
    t,
    cluster,
    "a restore whose pod is placed on node-b: explained, no CreateVolume there; restored on node-a",
    () =>
      misplaced(cluster, {
        name: "misplaced",
        dataSource: { kind: "VolumeSnapshot", name: "data-snap" },
        message:
          /^cannot restore VolumeSnapshot "democratic\/data-snap" on node "node-b": its source volume \(PersistentVolume "pvc-[0-9a-f-]+"\) is on the node with org\.democratic-csi\.topology\/node=node-a, .* volume\.kubernetes\.io\/selected-node was removed/,
      }),
  );

  await step(
    t,
    cluster,
    "a clone whose pod is placed on node-b: explained, no CreateVolume there; cloned on node-a",
    () =>
      misplaced(cluster, {
        name: "misplaced-copy",
        dataSource: { kind: "PersistentVolumeClaim", name: "data" },
        message:
          /^cannot clone PersistentVolumeClaim "democratic\/data" on node "node-b": its volume \(PersistentVolume "pvc-[0-9a-f-]+"\) is on the node with org\.democratic-csi\.topology\/node=node-a, /,
      }),
  );

  await step(
    t,
    cluster,
    "a Block claim: the driver's refusal in a Warning, nothing created",
    async () => {
      const body = claimObject("raw", { storageClass: DEMOCRATIC_STORAGE_CLASS, size: "1Gi" });
      body.spec!.volumeMode = "Block";
      const claim = await admin.core.createNamespacedPersistentVolumeClaim({ namespace: NS, body });
      await createPodOn(cluster, { namespace: NS, name: "raw", node: "node-a" });
      const event = await waitForClaimEvent(cluster, { namespace: NS, name: "raw" }, {
        reason: "ProvisioningFailed",
      });
      assert.equal(event.type, "Warning");
      assert.match(event.message!, /code = InvalidArgument desc = invalid access_type block$/);
      const name = `pvc-${claim.metadata!.uid}`;
      for (const node of cluster.nodes) {
        assert.equal(existsSync(node.volumePath(name)), false, node.name);
      }
      const pending = await admin.core.readNamespacedPersistentVolumeClaim({
        namespace: NS,
        name: "raw",
      });
      assert.equal(pending.status?.phase, "Pending");
    },
  );

  await step(t, cluster, "deleting the claim: DeleteVolume, directory and PV gone", async () => {
    const history = await watchVolume(admin, dataHandle);
    try {
      await forceDeletePod(admin, NS, "data");
      await admin.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name: "data" });
      await withTimeout(history.deleted, {
        description: `PV ${dataHandle} deleted`,
        timeoutMs: 60_000,
      });
      assert.deepEqual(history.phases, ["Bound", "Released"]);
    } finally {
      history.stop();
    }
    const deletes = (await nodeA.calls("DeleteVolume"))
      .filter((call) => (call.request as { volume_id: string }).volume_id === dataHandle);
    assert.deepEqual(deletes.map((call) => call.codeName), ["OK"]);
    assert.equal(existsSync(nodeA.volumePath(dataHandle)), false);
    assert.deepEqual(await nodeB.calls("DeleteVolume"), []);
  });

  await step(
    t,
    cluster,
    "a restore once the source volume is gone, pod on node-b: the driver's NotFound explained; restored on node-a",
    async () => {
      const claim = await createClaimOn(cluster, {
        namespace: NS,
        name: "late",
        node: "node-b",
        storageClass: DEMOCRATIC_STORAGE_CLASS,
        dataSource: { kind: "VolumeSnapshot", name: "data-snap" },
      });
      const event = await waitForClaimEvent(cluster, { namespace: NS, name: "late" }, {
        reason: "ProvisioningFailed",
        message: (text) => text.includes("which node does is not known"),
      });
      assert.match(event.message!, /code = NotFound desc = invalid volume_content_source path/);
      const calls = await createVolumeCallsFor(nodeB, claim.metadata!.uid!);
      assert.ok(calls.length >= 1 && calls.every((call) => call.codeName === "NOT_FOUND"));
      // democratic-csi makes the volume's directory before it looks for the source and
      // answers NotFound without removing it. No volume id came back, so neither upstream
      // nor this agent has anything to delete: an empty directory stays on node-b.
      const leftover = nodeB.volumePath(`pvc-${claim.metadata!.uid}`);
      assert.deepEqual([...Deno.readDirSync(leftover)], []);
      await forceDeletePod(admin, NS, "late");
      await createPodOn(cluster, {
        namespace: NS,
        name: "late",
        node: "node-a",
        podName: "late-a",
      });
      await assertCopyOnNodeA(cluster, "late", { emptyDirOnNodeB: true });
    },
  );

  await step(
    t,
    cluster,
    "an Immediate claim: one node wins, the claim binds, one volume",
    async () => {
      await admin.storage.createStorageClass({
        body: {
          metadata: { name: IMMEDIATE_CLASS },
          provisioner: cluster.driverName,
          reclaimPolicy: "Delete",
          volumeBindingMode: "Immediate",
        },
      });
      const claim = await admin.core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: claimObject("race", { storageClass: IMMEDIATE_CLASS, size: "1Gi" }),
      });
      const uid = claim.metadata!.uid!;
      const { pv } = await boundVolume(cluster, "race");
      const winners = affinityNodes(pv, DEMOCRATIC_TOPOLOGY_KEY);
      assert.equal(winners.length, 1, `${winners}`);
      const [winner, loser] = winners[0] === "node-a" ? [nodeA, nodeB] : [nodeB, nodeA];
      assert.equal(pv.spec?.capacity?.storage, "1Gi");
      assert.ok(existsSync(winner.volumePath(pv.metadata!.name!)));
      assert.equal(existsSync(loser.volumePath(pv.metadata!.name!)), false);
      assert.deepEqual((await createVolumeCallsFor(winner, uid)).map((call) => call.codeName), [
        "OK",
      ]);
      assert.deepEqual(await createVolumeCallsFor(loser, uid), []);
      const volumes = (await nodeA.volumes()).concat(await nodeB.volumes())
        .filter((volume) => volume.id === pv.metadata!.name);
      assert.equal(volumes.length, 1);
    },
  );

  await step(t, cluster, "the agent called nothing democratic-csi lacks", async () => {
    for (const node of cluster.nodes) {
      const unimplemented = (await node.calls()).filter((call) =>
        call.codeName === "UNIMPLEMENTED"
      );
      assert.deepEqual(unimplemented.map((call) => call.method), [], node.name);
    }
  });
});
