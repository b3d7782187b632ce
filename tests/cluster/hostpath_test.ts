/**
 * The upstream hostpath driver on the test cluster, with this project's
 * agent on each node: upstream's CSIDriver and classes, provisioning through
 * the recording proxy, a raw block volume on a real loop device, and
 * VolumeSnapshots taken by the per-node csi-snapshotter.
 */

import assert from "node:assert/strict";
import { NODE_DEPLOYMENT_ARGS } from "./agents.ts";
import { startCluster } from "./cluster.ts";
import { HOSTPATH_TOPOLOGY_KEY } from "./hostpath.ts";
import {
  createVolumeSnapshot,
  readSnapshotObject,
  SNAPSHOT_CLASS,
  waitForSnapshotReady,
} from "./snapshots.ts";
import { step } from "./steps.ts";
import { waitFor } from "./wait.ts";
import {
  affinityNodes,
  createClaimAndPod,
  createNamespace,
  forceDeletePod,
  waitForClaimBound,
} from "./workloads.ts";

const NS = "hostpath";

/** Loop devices whose backing file lies under `dir`. */
function loopDevicesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync("/sys/block")) {
    if (!entry.name.startsWith("loop")) continue;
    try {
      const backing = Deno.readTextFileSync(`/sys/block/${entry.name}/loop/backing_file`);
      if (backing.startsWith(`${dir}/`)) found.push(entry.name);
    } catch {
      // not attached
    }
  }
  return found;
}

Deno.test("the upstream hostpath driver per node: provisioning, raw block, snapshots", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b"],
    driverOptions: { capacity: { fast: "4Gi" }, recordCalls: true },
    snapshots: true,
    agent: "ours",
    agentArgs: [...NODE_DEPLOYMENT_ARGS, "--capacity-poll-interval=2s"],
  });
  const { admin } = cluster;
  await createNamespace(admin, NS);

  await step(t, cluster, "upstream's CSIDriver, classes and topology key", async () => {
    const driver = await admin.storage.readCSIDriver({ name: "hostpath.csi.k8s.io" });
    assert.deepEqual(driver.spec.volumeLifecycleModes, ["Persistent", "Ephemeral"]);
    assert.equal(driver.spec.fsGroupPolicy, "File");
    assert.equal(cluster.storageClassName("fast"), "csi-hostpath-fast");
    await admin.storage.readStorageClass({ name: "csi-hostpath-fast" });
    const csiNode = await admin.storage.readCSINode({ name: "node-b" });
    assert.deepEqual(csiNode.spec.drivers[0]?.topologyKeys, [HOSTPATH_TOPOLOGY_KEY]);
  });

  let pvName = "";
  await step(
    t,
    cluster,
    "a claim on node-b: the driver of node-b creates it, through the proxy",
    async () => {
      await createClaimAndPod(admin, NS, {
        name: "data",
        storageClass: "csi-hostpath-fast",
        size: "1Gi",
        node: "node-b",
      });
      const claim = await waitForClaimBound(admin, { namespace: NS, name: "data" });
      pvName = claim.spec!.volumeName!;
      const pv = await admin.core.readPersistentVolume({ name: pvName });
      assert.deepEqual(affinityNodes(pv, HOSTPATH_TOPOLOGY_KEY), ["node-b"]);
      const volumes = await cluster.node("node-b").volumes();
      assert.deepEqual(volumes.map((v) => [v.name, v.kind, v.sizeBytes, v.id]), [
        [pvName, "fast", 1024 ** 3, pv.spec!.csi!.volumeHandle],
      ]);
      assert.deepEqual(await cluster.node("node-a").volumes(), []);
      const [call, ...more] = await cluster.node("node-b").calls("CreateVolume");
      assert.equal(more.length, 0);
      assert.equal(call?.codeName, "OK");
      assert.deepEqual((call?.request as { name: string }).name, pvName);
      assert.deepEqual((call?.request as { parameters: unknown }).parameters, { kind: "fast" });
      assert.equal(
        (call?.response as { volume: { volume_id: string } }).volume.volume_id,
        volumes[0]!.id,
      );
      assert.deepEqual(await cluster.node("node-a").calls("CreateVolume"), []);
    },
  );

  await step(
    t,
    cluster,
    "a VolumeSnapshot of it is taken by node-b's csi-snapshotter: readyToUse",
    async () => {
      await createVolumeSnapshot(admin, { namespace: NS, name: "data-snap", claim: "data" });
      const snapshot = await waitForSnapshotReady(admin, { namespace: NS, name: "data-snap" });
      assert.equal(snapshot.spec.volumeSnapshotClassName, SNAPSHOT_CLASS);
      const content = await readSnapshotObject<{
        metadata: { labels?: Record<string, string> };
        status?: { snapshotHandle?: string };
      }>(admin, {
        kind: "VolumeSnapshotContent",
        name: snapshot.status!.boundVolumeSnapshotContentName!,
      });
      assert.equal(
        content.metadata.labels?.["snapshot.storage.kubernetes.io/managed-by"],
        "node-b",
      );
      const snapshots = await cluster.node("node-b").snapshots();
      assert.deepEqual(snapshots.map((s) => [s.id, s.readyToUse]), [[
        content.status?.snapshotHandle,
        true,
      ]]);
    },
  );

  await step(
    t,
    cluster,
    "a raw block claim gets a file with a loop device; deleting it detaches it",
    async () => {
      await admin.core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: {
          metadata: { name: "raw" },
          spec: {
            accessModes: ["ReadWriteOnce"],
            volumeMode: "Block",
            storageClassName: "csi-hostpath-fast",
            resources: { requests: { storage: "64Mi" } },
          },
        },
      });
      await admin.core.createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name: "raw" },
          spec: {
            nodeSelector: { "kubernetes.io/hostname": "node-a" },
            containers: [{
              name: "app",
              image: "registry.k8s.io/pause:3.10",
              volumeDevices: [{ name: "data", devicePath: "/dev/xvda" }],
            }],
            volumes: [{ name: "data", persistentVolumeClaim: { claimName: "raw" } }],
          },
        },
      });
      await waitForClaimBound(admin, { namespace: NS, name: "raw" });
      const [volume] = await cluster.node("node-a").volumes();
      assert.equal(volume?.block, true);
      assert.equal(loopDevicesUnder(cluster.node("node-a").stateDir).length, 1);
      await forceDeletePod(admin, NS, "raw");
      await admin.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name: "raw" });
      await waitFor(async () => (await cluster.node("node-a").volumes()).length === 0, {
        description: "the block volume deleted by node-a's agent",
      });
      assert.deepEqual(loopDevicesUnder(cluster.node("node-a").stateDir), []);
    },
  );
  await cluster.stop();
  assert.deepEqual(loopDevicesUnder(cluster.dir), []);
});
