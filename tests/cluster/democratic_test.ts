/**
 * democratic-csi's local-hostpath driver as the cluster's driver: one
 * process per node with its own directory, the CSIDriver, class, topology
 * labels and VolumeSnapshotClass a test relies on, the driver answering on
 * each node's socket, and a clean stop.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { startCluster } from "./cluster.ts";
import {
  DEMOCRATIC_DRIVER_NAME,
  DEMOCRATIC_SNAPSHOT_CLASS,
  DEMOCRATIC_STORAGE_CLASS,
  DEMOCRATIC_TOPOLOGY_KEY,
} from "./democratic.ts";
import { runCommand } from "./process.ts";
import { step } from "./steps.ts";

const MOUNT = [{ mount: {}, access_mode: { mode: "SINGLE_NODE_WRITER" } }];

Deno.test("a cluster on democratic-csi starts, its drivers answer, and it stops cleanly", async (t) => {
  const cluster = await startCluster({ driver: "democratic", snapshots: true });
  try {
    await step(t, cluster, "the CSIDriver, class, snapshot class and node labels", async () => {
      assert.equal(cluster.driverName, DEMOCRATIC_DRIVER_NAME);
      assert.equal(cluster.topologyKey, DEMOCRATIC_TOPOLOGY_KEY);
      const driver = await cluster.admin.storage.readCSIDriver({ name: DEMOCRATIC_DRIVER_NAME });
      assert.equal(driver.spec.storageCapacity, true);
      assert.equal(driver.spec.attachRequired, false);
      assert.equal(cluster.storageClassName("fast"), DEMOCRATIC_STORAGE_CLASS);
      const storageClass = await cluster.admin.storage.readStorageClass({
        name: DEMOCRATIC_STORAGE_CLASS,
      });
      assert.equal(storageClass.provisioner, DEMOCRATIC_DRIVER_NAME);
      assert.equal(storageClass.volumeBindingMode, "WaitForFirstConsumer");
      const snapshotClass = JSON.parse(
        await cluster.kubectl(["get", "volumesnapshotclass", DEMOCRATIC_SNAPSHOT_CLASS, "-ojson"]),
      );
      assert.equal(snapshotClass.driver, DEMOCRATIC_DRIVER_NAME);
      for (const node of cluster.nodes) {
        const object = await cluster.admin.core.readNode({ name: node.name });
        assert.equal(object.metadata?.labels?.[DEMOCRATIC_TOPOLOGY_KEY], node.name);
        const csiNode = await cluster.admin.storage.readCSINode({ name: node.name });
        assert.deepEqual(csiNode.spec.drivers.map((d) => [d.name, d.topologyKeys]), [
          [DEMOCRATIC_DRIVER_NAME, [DEMOCRATIC_TOPOLOGY_KEY]],
        ]);
        assert.ok(node.snapshotter?.running, `${node.name}'s csi-snapshotter runs`);
      }
    });

    await step(t, cluster, "NodeGetInfo reports the node label's topology", async () => {
      for (const node of cluster.nodes) {
        const info = await node.callDriver("Node", "NodeGetInfo", {});
        assert.equal(info.node_id, node.name);
        assert.deepEqual(info.accessible_topology, {
          segments: { [DEMOCRATIC_TOPOLOGY_KEY]: node.name },
        });
      }
    });

    await step(t, cluster, "GetCapacity answers its filesystem's free space", async () => {
      const answer = await cluster.nodes[0]!.callDriver("Controller", "GetCapacity", {
        volume_capabilities: MOUNT,
        accessible_topology: { segments: { [DEMOCRATIC_TOPOLOGY_KEY]: "node-a" } },
      });
      const df = await runCommand("df", ["--block-size=1", "--output=avail", cluster.dir]);
      const free = Number(df.split("\n")[1]);
      assert.match(String(answer.available_capacity), /^[1-9]\d*$/);
      // Other processes write to the same filesystem meanwhile.
      assert.ok(Math.abs(Number(answer.available_capacity) - free) < free * 0.05, `${free}`);
    });

    await step(t, cluster, "each node's volumes are its own directories", async () => {
      const [a, b] = cluster.nodes;
      await a!.callDriver("Controller", "CreateVolume", {
        name: "pvc-smoke",
        capacity_range: { required_bytes: 1024 },
        volume_capabilities: MOUNT,
      });
      assert.deepEqual((await a!.volumes()).map((volume) => volume.id), ["pvc-smoke"]);
      assert.deepEqual(await b!.volumes(), []);
      assert.ok(existsSync(a!.volumePath("pvc-smoke")));
      await a!.callDriver("Controller", "DeleteVolume", { volume_id: "pvc-smoke" });
      assert.deepEqual(await a!.volumes(), []);
    });
  } finally {
    await cluster.stop();
  }
  assert.deepEqual(cluster.logs().filter((process) => process.running), []);
  assert.equal(existsSync(cluster.dir), false, "the cluster's temporary directory is removed");
});
