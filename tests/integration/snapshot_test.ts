/**
 * Restores and clones end to end, with this project's agent on each node of
 * the upstream hostpath driver (calls seen through the recording proxy),
 * snapshot-controller and a csi-snapshotter per node: the driver really
 * copies the data (a tar of the volume's directory for a snapshot, a copy
 * for a clone), so a file written into the source volume's directory on its
 * node must be read back from the new volume's directory. The protection
 * finalizers are looked at while the node's driver is frozen (SIGSTOP), that
 * is while CreateVolume cannot finish (within --timeout: the driver loses the
 * source of a clone whose first answer was lost, so a retried clone
 * CreateVolume fails with AlreadyExists for ever; see
 * csi-driver-host-path's CreateVolume, which never stores ParentVolID);
 * a source on another node is explained
 * without any CreateVolume there (a restore and a clone), and a pre-provisioned snapshot of unknown
 * place is tried and its NotFound explained. For an Immediate clone only the node that holds the
 * source takes part in the ownership race. The agents hold upstream's rbac.yaml alone: the
 * cloning-protection finalizer is written with an update of the claim read, as upstream writes it
 * (deploy/'s RBAC, which allows the patch, is proven by tests/e2e/rbac_test.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { PatchStrategy } from "@kubernetes/client-node";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import {
  createVolumeSnapshot,
  readSnapshotObject,
  waitForSnapshotReady,
} from "../cluster/snapshots.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import {
  affinityNodes,
  createNamespace,
  forceDeletePod,
  waitForClaimBound,
} from "../cluster/workloads.ts";
import {
  claimFinalizers,
  CLONE_FINALIZER,
  createClaimOn,
  createPodOn,
  misplacedIsExplained,
  SNAPSHOT_FINALIZER,
  snapshotFinalizers,
  volumeDirectory,
  waitForFinalizer,
} from "./snapshot_support.ts";
import { attempts, createImmediateClass, sumOverAgents } from "./immediate_support.ts";
import { createVolumeCallsFor, startOurAgents, step, waitForClaimEvent } from "./support.ts";

const NS = "restores";
const SWEEP_MS = 1000;
const AGENT_ARGS = [
  "-v=4",
  "--retry-interval-start=200ms",
  "--retry-interval-max=2s",
  // Longer than a frozen driver is kept frozen: the first CreateVolume must get its answer.
  "--timeout=60s",
  `--snapshot-orphan-sweep-interval=${SWEEP_MS}ms`,
  // A short ownership race for the Immediate clone.
  "--node-deployment-base-delay=200ms",
  "--node-deployment-max-delay=2s",
];
const HELLO = "written on node-a before the snapshot\n";

/** The one CreateVolume the node's driver got for the claim: OK, and its request. */
async function onlyCreateVolume(cluster: RunningCluster, node: string, uid: string) {
  const calls = await createVolumeCallsFor(cluster.node(node), uid);
  assert.deepEqual(calls.map((call) => call.codeName), ["OK"]);
  return calls[0]!.request as { volume_content_source: unknown };
}

async function pvNodes(cluster: RunningCluster, name: string): Promise<string[]> {
  const claim = await waitForClaimBound(cluster.admin, { namespace: NS, name });
  const pv = await cluster.admin.core.readPersistentVolume({ name: claim.spec!.volumeName! });
  return affinityNodes(pv, cluster.topologyKey);
}

/** The restore or clone on node-a, with the file written on node-a before the snapshot. */
async function madeOnNodeA(cluster: RunningCluster, name: string): Promise<void> {
  assert.deepEqual(await pvNodes(cluster, name), ["node-a"]);
  const dir = await volumeDirectory(cluster, { namespace: NS, name, node: "node-a" });
  assert.equal(await Deno.readTextFile(join(dir, "hello.txt")), HELLO);
}

Deno.test("restores and clones on the hostpath driver: content, finalizers, node-local sources", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b"],
    driverOptions: { capacity: { fast: "10Gi" }, recordCalls: true },
    snapshots: true,
    // Placement is by the pods' node selectors here, not by published capacity.
    storageCapacity: false,
  });
  const { admin } = cluster;
  await createNamespace(admin, NS);
  const agents = await startOurAgents(cluster, { args: AGENT_ARGS, rbac: "upstream" });
  const nodeA = cluster.node("node-a");
  let snapshotHandle = "";
  let originHandle = "";

  await step(t, cluster, "a volume on node-a with a file in it, and a snapshot of it", async () => {
    await createClaimOn(cluster, { namespace: NS, name: "origin", node: "node-a" });
    const dir = await volumeDirectory(cluster, { namespace: NS, name: "origin", node: "node-a" });
    originHandle = dir.split("/").at(-1)!;
    await Deno.writeTextFile(join(dir, "hello.txt"), HELLO);
    await createVolumeSnapshot(admin, { namespace: NS, name: "origin-snap", claim: "origin" });
    const snapshot = await waitForSnapshotReady(admin, { namespace: NS, name: "origin-snap" });
    const content = await readSnapshotObject<{ status: { snapshotHandle: string } }>(admin, {
      kind: "VolumeSnapshotContent",
      name: snapshot.status!.boundVolumeSnapshotContentName!,
    });
    snapshotHandle = content.status.snapshotHandle;
  });

  await step(
    t,
    cluster,
    "a restore on node-a: the snapshot is protected while CreateVolume runs, then released; the file is there",
    async () => {
      const ref = { namespace: NS, name: "origin-snap" };
      nodeA.freezeDriver();
      let uid = "";
      try {
        const claim = await createClaimOn(cluster, {
          namespace: NS,
          name: "restored",
          node: "node-a",
          dataSource: { kind: "VolumeSnapshot", name: "origin-snap" },
        });
        uid = claim.metadata!.uid!;
        // Added just before CreateVolume, which the frozen driver cannot answer.
        await waitForFinalizer(() => snapshotFinalizers(cluster, ref), {
          finalizer: SNAPSHOT_FINALIZER,
          present: true,
          what: "VolumeSnapshot origin-snap",
        });
        const pending = await admin.core.readNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: "restored",
        });
        assert.equal(pending.status?.phase, "Pending");
      } finally {
        nodeA.thawDriver();
      }
      const dir = await volumeDirectory(cluster, {
        namespace: NS,
        name: "restored",
        node: "node-a",
      });
      assert.equal(await Deno.readTextFile(join(dir, "hello.txt")), HELLO);
      await waitForFinalizer(() => snapshotFinalizers(cluster, ref), {
        finalizer: SNAPSHOT_FINALIZER,
        present: false,
        what: "VolumeSnapshot origin-snap",
      });
      const request = await onlyCreateVolume(cluster, "node-a", uid);
      assert.deepEqual(request.volume_content_source, {
        snapshot: { snapshot_id: snapshotHandle },
        type: "snapshot",
      });
    },
  );

  await step(
    t,
    cluster,
    "a restore whose pod is placed on node-b: explained, no CreateVolume there, restored once the pod goes to node-a",
    () =>
      misplacedIsExplained(cluster, {
        namespace: NS,
        madeOnNodeA: (name) => madeOnNodeA(cluster, name),
        name: "misplaced",
        dataSource: { kind: "VolumeSnapshot", name: "origin-snap" },
        message:
          /^cannot restore VolumeSnapshot "restores\/origin-snap" on node "node-b": its source volume \(PersistentVolume "pvc-[0-9a-f-]+"\) is on the node with topology\.hostpath\.csi\/node=node-a, .* give it a nodeAffinity \(or nodeSelector\) for topology\.hostpath\.csi\/node=node-a\. volume\.kubernetes\.io\/selected-node was removed/,
      }),
  );

  await step(
    t,
    cluster,
    "a clone whose pod is placed on node-b: explained, no CreateVolume there, cloned once the pod goes to node-a",
    () =>
      misplacedIsExplained(cluster, {
        namespace: NS,
        madeOnNodeA: (name) => madeOnNodeA(cluster, name),
        name: "misplaced-copy",
        dataSource: { kind: "PersistentVolumeClaim", name: "origin" },
        message:
          /^cannot clone PersistentVolumeClaim "restores\/origin" on node "node-b": its volume \(PersistentVolume "pvc-[0-9a-f-]+"\) is on the node with topology\.hostpath\.csi\/node=node-a, .* give it a nodeAffinity \(or nodeSelector\) for topology\.hostpath\.csi\/node=node-a\. volume\.kubernetes\.io\/selected-node was removed/,
      }),
  );

  await step(
    t,
    cluster,
    "an Immediate clone: only node-a, which holds its source, races; node-b never selects itself",
    async () => {
      await createImmediateClass(cluster, { name: "immediate-fast", pool: "fast" });
      const claim = await createClaimOn(cluster, {
        namespace: NS,
        name: "immediate-copy",
        node: "node-a",
        dataSource: { kind: "PersistentVolumeClaim", name: "origin" },
        pod: false,
        storageClass: "immediate-fast",
      });
      assert.deepEqual(await pvNodes(cluster, "immediate-copy"), ["node-a"]);
      const dir = await volumeDirectory(cluster, {
        namespace: NS,
        name: "immediate-copy",
        node: "node-a",
      });
      assert.equal(await Deno.readTextFile(join(dir, "hello.txt")), HELLO);
      const nodeB = [agents.get("node-b")!];
      const patches = await Promise.all(
        ["selected", "conflict", "gone", "error"].map((result) => attempts(nodeB, result)),
      );
      assert.deepEqual(patches, [0, 0, 0, 0], "node-b never patched selected-node");
      const declines = 'csi_node_provisioner_immediate_binding_declines_total{reason="source"}';
      assert.ok(await sumOverAgents(nodeB, declines) >= 1, "node-b declined: source");
      assert.deepEqual(
        await createVolumeCallsFor(cluster.node("node-b"), claim.metadata!.uid!),
        [],
      );
    },
  );

  await step(
    t,
    cluster,
    "a pre-provisioned snapshot of unknown place: node-b's NotFound is explained, node-a restores it",
    async () => {
      await admin.objects.create({
        apiVersion: "snapshot.storage.k8s.io/v1",
        kind: "VolumeSnapshotContent",
        metadata: {
          name: "imported-content",
          // csi-snapshotter in node mode checks only the contents of its node.
          labels: { "snapshot.storage.kubernetes.io/managed-by": "node-a" },
        },
        spec: {
          driver: cluster.driverName,
          deletionPolicy: "Retain",
          source: { snapshotHandle },
          volumeSnapshotRef: { namespace: NS, name: "imported" },
        },
      });
      await admin.objects.create({
        apiVersion: "snapshot.storage.k8s.io/v1",
        kind: "VolumeSnapshot",
        metadata: { name: "imported", namespace: NS },
        spec: { source: { volumeSnapshotContentName: "imported-content" } },
      });
      await waitForSnapshotReady(admin, { namespace: NS, name: "imported" });
      const claim = await createClaimOn(cluster, {
        namespace: NS,
        name: "from-imported",
        node: "node-b",
        dataSource: { kind: "VolumeSnapshot", name: "imported" },
      });
      const event = await waitForClaimEvent(cluster, { namespace: NS, name: "from-imported" }, {
        reason: "ProvisioningFailed",
        message: (text) => text.includes("which node does is not known"),
      });
      assert.match(event.message!, /code = NotFound/);
      assert.match(event.message!, /VolumeSnapshotContent "imported-content" is pre-provisioned/);
      const calls = await createVolumeCallsFor(cluster.node("node-b"), claim.metadata!.uid!);
      assert.ok(calls.length >= 1 && calls.every((call) => call.codeName === "NOT_FOUND"));
      await forceDeletePod(admin, NS, "from-imported");
      await createPodOn(cluster, {
        namespace: NS,
        name: "from-imported",
        node: "node-a",
        podName: "imported-moved",
      });
      const dir = await volumeDirectory(cluster, {
        namespace: NS,
        name: "from-imported",
        node: "node-a",
      });
      assert.equal(await Deno.readTextFile(join(dir, "hello.txt")), HELLO);
    },
  );

  await step(
    t,
    cluster,
    "orphaned snapshot finalizers are swept; one a Pending restore still needs is kept",
    async () => {
      await createVolumeSnapshot(admin, { namespace: NS, name: "orphan-snap", claim: "origin" });
      await waitForSnapshotReady(admin, { namespace: NS, name: "orphan-snap" });
      // Pending for good: no pod, so no node is ever selected.
      await createClaimOn(cluster, {
        namespace: NS,
        name: "waiting",
        node: "node-a",
        dataSource: { kind: "VolumeSnapshot", name: "origin-snap" },
        pod: false,
      });
      for (const name of ["orphan-snap", "origin-snap"]) {
        await admin.objects.patch(
          {
            apiVersion: "snapshot.storage.k8s.io/v1",
            kind: "VolumeSnapshot",
            metadata: { name, namespace: NS, finalizers: [SNAPSHOT_FINALIZER] },
          },
          undefined,
          undefined,
          undefined,
          undefined,
          PatchStrategy.MergePatch,
        );
      }
      await waitForFinalizer(
        () => snapshotFinalizers(cluster, { namespace: NS, name: "orphan-snap" }),
        {
          finalizer: SNAPSHOT_FINALIZER,
          present: false,
          what: "VolumeSnapshot orphan-snap",
        },
      );
      // A negative check needs a window: three more sweeps of every agent.
      await delay(3 * SWEEP_MS);
      const kept = await snapshotFinalizers(cluster, { namespace: NS, name: "origin-snap" });
      assert.ok(kept.includes(SNAPSHOT_FINALIZER), "origin-snap keeps its finalizer");
      await admin.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name: "waiting" });
      await waitForFinalizer(
        () => snapshotFinalizers(cluster, { namespace: NS, name: "origin-snap" }),
        {
          finalizer: SNAPSHOT_FINALIZER,
          present: false,
          what: "VolumeSnapshot origin-snap",
        },
      );
    },
  );

  await step(
    t,
    cluster,
    "a clone: its source is protected, its deletion held until the clone is bound; the file is there",
    async () => {
      const origin = { namespace: NS, name: "origin" };
      nodeA.freezeDriver();
      let uid = "";
      try {
        const claim = await createClaimOn(cluster, {
          namespace: NS,
          name: "copy",
          node: "node-a",
          dataSource: { kind: "PersistentVolumeClaim", name: "origin" },
        });
        uid = claim.metadata!.uid!;
        await waitForFinalizer(() => claimFinalizers(cluster, origin), {
          finalizer: CLONE_FINALIZER,
          present: true,
          what: "claim origin",
        });
        await forceDeletePod(admin, NS, "origin");
        await admin.core.deleteNamespacedPersistentVolumeClaim(origin);
        // Kubernetes lets go of it (no pod uses it): only the clone's end may delete it.
        await waitForFinalizer(() => claimFinalizers(cluster, origin), {
          finalizer: "kubernetes.io/pvc-protection",
          present: false,
          what: "claim origin",
        });
        const held = await admin.core.readNamespacedPersistentVolumeClaim(origin);
        assert.ok(held.metadata?.deletionTimestamp);
        assert.deepEqual(held.metadata?.finalizers, [CLONE_FINALIZER]);
      } finally {
        nodeA.thawDriver();
      }
      const dir = await volumeDirectory(cluster, { namespace: NS, name: "copy", node: "node-a" });
      assert.equal(await Deno.readTextFile(join(dir, "hello.txt")), HELLO);
      await waitFor(async () => {
        const list = await admin.core.listNamespacedPersistentVolumeClaim({
          namespace: NS,
          fieldSelector: "metadata.name=origin",
        });
        return list.items.length === 0;
      }, { description: "origin deleted once its clone is bound" });
      assert.equal(
        (await admin.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name: "copy" }))
          .status?.phase,
        "Bound",
      );
      const request = await onlyCreateVolume(cluster, "node-a", uid);
      assert.equal(
        (request.volume_content_source as { volume: { volume_id: string } }).volume.volume_id,
        originHandle,
      );
    },
  );
});
