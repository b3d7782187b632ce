/**
 * A cluster without the VolumeSnapshot CRDs: the agent starts and works
 * (provisions, clones), says once in its log that snapshots are not
 * served, and a claim that restores a snapshot gets a Warning saying what
 * to install. Once external-snapshotter's CRDs and controllers are installed
 * on the running cluster, that claim is restored and the orphan sweep
 * starts, without restarting the agent.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startCluster } from "../cluster/cluster.ts";
import { createVolumeSnapshot, waitForSnapshotReady } from "../cluster/snapshots.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { createClaimOn, volumeDirectory } from "./snapshot_support.ts";
import { startOurAgents, step, waitForClaimEvent } from "./support.ts";

const NS = "no-crds";
const NOT_SERVED = "is not served: claims that restore a snapshot get a Warning event";

Deno.test("without the snapshot CRDs the agent works, explains restores, and needs no restart once they come", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a"],
    driverOptions: { capacity: { fast: "10Gi" } },
    snapshots: "later",
    storageCapacity: false,
  });
  const { admin } = cluster;
  await createNamespace(admin, NS);
  await startOurAgents(cluster, {
    args: [
      "-v=2",
      "--retry-interval-start=200ms",
      "--retry-interval-max=2s",
      "--snapshot-orphan-sweep-interval=1s",
    ],
  });
  const logFile = cluster.node("node-a").agent!.logFile;
  const log = () => Deno.readTextFile(logFile);

  await step(
    t,
    cluster,
    "a claim and a clone of it are provisioned; the log says once that snapshots are not served",
    async () => {
      await createClaimOn(cluster, { namespace: NS, name: "data", node: "node-a" });
      const dir = await volumeDirectory(cluster, { namespace: NS, name: "data", node: "node-a" });
      await Deno.writeTextFile(join(dir, "note.txt"), "kept\n");
      await createClaimOn(cluster, {
        namespace: NS,
        name: "data-copy",
        node: "node-a",
        dataSource: { kind: "PersistentVolumeClaim", name: "data" },
      });
      const copy = await volumeDirectory(cluster, {
        namespace: NS,
        name: "data-copy",
        node: "node-a",
      });
      assert.equal(await Deno.readTextFile(join(copy, "note.txt")), "kept\n");
      assert.equal((await log()).split(NOT_SERVED).length - 1, 1);
    },
  );

  await step(t, cluster, "a restore gets a Warning that says what to install", async () => {
    await createClaimOn(cluster, {
      namespace: NS,
      name: "restored",
      node: "node-a",
      dataSource: { kind: "VolumeSnapshot", name: "data-snap" },
    });
    const event = await waitForClaimEvent(cluster, { namespace: NS, name: "restored" }, {
      reason: "ProvisioningFailed",
    });
    assert.equal(
      event.message,
      "error getting handle for DataSource Type VolumeSnapshot by Name data-snap: error getting " +
        "snapshot data-snap from api server: the VolumeSnapshot API (snapshot.storage.k8s.io/v1) " +
        "is not served by this cluster: install external-snapshotter's CRDs and " +
        "snapshot-controller; the claim is retried, no restart of csi-node-provisioner is needed " +
        `(PersistentVolumeClaim "${NS}/restored", spec.dataSource)`,
    );
    assert.equal((await log()).split(NOT_SERVED).length - 1, 1, "said once only");
  });

  await step(
    t,
    cluster,
    "the CRDs installed: the claim is restored and the sweep starts, same agent",
    async () => {
      const pid = cluster.node("node-a").agent!.pid;
      await cluster.startSnapshotting();
      await createVolumeSnapshot(admin, { namespace: NS, name: "data-snap", claim: "data" });
      await waitForSnapshotReady(admin, { namespace: NS, name: "data-snap" });
      const dir = await volumeDirectory(cluster, {
        namespace: NS,
        name: "restored",
        node: "node-a",
      });
      assert.equal(await Deno.readTextFile(join(dir, "note.txt")), "kept\n");
      await waitFor(async () => (await log()).includes("Started the snapshot orphan sweep"), {
        description: "the orphan sweep started",
      });
      assert.ok((await log()).includes("VolumeSnapshot API is now served"));
      assert.equal(cluster.node("node-a").agent!.pid, pid);
    },
  );
});
