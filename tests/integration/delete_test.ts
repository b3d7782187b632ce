/**
 * Deleting released volumes on the real control plane: the PV controller of
 * kube-controller-manager marks a PV Released when its claim goes, and the
 * agent of the node that holds the volume deletes it. The CSIDriver requires
 * attachment here, so the real attach/detach controller creates
 * VolumeAttachments for pods, and the driver has PUBLISH_UNPUBLISH_VOLUME
 * (the upstream hostpath driver with --enable-attach, its calls recorded).
 */
import assert from "node:assert/strict";
import type { CoreV1Event } from "@kubernetes/client-node";
import { nodeLabels } from "../../lib/model/labels.ts";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import {
  createClaimAndPod,
  createNamespace,
  forceDeletePod,
  waitForClaimBound,
  watchVolume,
} from "../cluster/workloads.ts";
import { mergePatch, selectedClaim, startOurAgents, step } from "./support.ts";

const NS = "del";
const FAST = "csi-hostpath-fast";
const ARGS = ["--retry-interval-start=200ms", "--retry-interval-max=1s", "-v=4"];

async function boundClaim(
  cluster: RunningCluster,
  name: string,
  options: { node: string; storageClass?: string },
) {
  await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: NS,
    body: selectedClaim(name, {
      node: options.node,
      storageClass: options.storageClass ?? FAST,
      driverName: cluster.driverName,
    }),
  });
  const claim = await waitForClaimBound(cluster.admin, { namespace: NS, name });
  const pv = await cluster.admin.core.readPersistentVolume({ name: claim.spec!.volumeName! });
  return { pvName: pv.metadata!.name!, volumeId: pv.spec!.csi!.volumeHandle };
}

async function pvEvents(cluster: RunningCluster, pvName: string): Promise<CoreV1Event[]> {
  const list = await cluster.admin.core.listNamespacedEvent({
    namespace: "default",
    fieldSelector: `involvedObject.kind=PersistentVolume,involvedObject.name=${pvName}`,
  });
  return list.items;
}

async function deleteClaimAndWaitGone(
  cluster: RunningCluster,
  name: string,
  pvName: string,
): Promise<string[]> {
  const history = await watchVolume(cluster.admin, pvName);
  try {
    await cluster.admin.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name });
    await waitFor(() => history.deleted.then(() => true), {
      description: `PV ${pvName} deleted`,
      timeoutMs: 60_000,
    });
    return history.phases;
  } finally {
    history.stop();
  }
}

const volumeIds = async (cluster: RunningCluster, node: string) =>
  (await cluster.node(node).volumes()).map((volume) => volume.id);

Deno.test("the agent deletes the released volumes of its node, on a real control plane", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b"],
    storageCapacity: false,
    attachRequired: true,
    driverOptions: {
      capacity: { fast: "50Gi" },
      recordCalls: true,
      extraArgs: ["--enable-attach"],
    },
  });
  const { admin } = cluster;
  await startOurAgents(cluster, { args: ARGS });
  await createNamespace(admin, NS);

  await step(
    t,
    cluster,
    "a deleted claim's PV goes Released, node-a's agent deletes the volume and the PV",
    async () => {
      const { pvName, volumeId } = await boundClaim(cluster, "plain", { node: "node-a" });
      const pv = await admin.core.readPersistentVolume({ name: pvName });
      assert.ok(
        pv.metadata?.finalizers?.includes("external-provisioner.volume.kubernetes.io/finalizer"),
      );
      // What node-a's agent selects its PV watch by; node-b's agent is not sent this PV.
      assert.deepEqual(pv.metadata?.labels, nodeLabels(cluster.driverName, "node-a"));
      const phases = await deleteClaimAndWaitGone(cluster, "plain", pvName);
      assert.ok(phases.includes("Released"), `phases seen: ${phases}`);
      assert.ok(
        !(await volumeIds(cluster, "node-a")).includes(volumeId),
        "the driver no longer has the volume",
      );
      assert.equal(
        (await cluster.node("node-b").calls("DeleteVolume")).length,
        0,
        "node-b made no call",
      );
    },
  );

  await step(
    t,
    cluster,
    "a PV of node-a without the agent's labels (as upstream's sidecar writes it) is deleted too",
    async () => {
      const { pvName, volumeId } = await boundClaim(cluster, "unlabelled", { node: "node-a" });
      // Removing them moves the PV from the agent's labelled watch to its unlabelled one.
      await admin.core.patchPersistentVolume({
        name: pvName,
        body: { metadata: { labels: null } },
      }, mergePatch);
      const pv = await admin.core.readPersistentVolume({ name: pvName });
      assert.equal(pv.metadata?.labels, undefined);
      const phases = await deleteClaimAndWaitGone(cluster, "unlabelled", pvName);
      assert.ok(phases.includes("Released"), `phases seen: ${phases}`);
      assert.ok(!(await volumeIds(cluster, "node-a")).includes(volumeId));
      assert.equal((await cluster.node("node-b").calls("DeleteVolume")).length, 0);
    },
  );

  await step(
    t,
    cluster,
    "a Retain PV stays, with its volume, and loses the protection finalizer",
    async () => {
      await admin.storage.createStorageClass({
        body: {
          metadata: { name: "test-retain" },
          provisioner: cluster.driverName,
          parameters: { kind: "fast" },
          reclaimPolicy: "Retain",
          volumeBindingMode: "WaitForFirstConsumer",
        },
      });
      const { pvName, volumeId } = await boundClaim(cluster, "kept", {
        node: "node-a",
        storageClass: "test-retain",
      });
      await admin.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name: "kept" });
      // Upstream drops its finalizer from Retain PVs; the PV then stays Released for good.
      await waitFor(async () => {
        const pv = await admin.core.readPersistentVolume({ name: pvName });
        const finalizers = pv.metadata?.finalizers ?? [];
        return pv.status?.phase === "Released" &&
          !finalizers.includes("external-provisioner.volume.kubernetes.io/finalizer");
      }, { description: "the Retain PV Released without the protection finalizer" });
      await new Promise((resolve) => setTimeout(resolve, 2000));
      assert.equal(
        (await admin.core.readPersistentVolume({ name: pvName })).status?.phase,
        "Released",
      );
      assert.ok((await volumeIds(cluster, "node-a")).includes(volumeId));
    },
  );

  await step(
    t,
    cluster,
    "an agent killed while DeleteVolume hangs in a frozen driver, restarted, finishes the job",
    async () => {
      const { pvName, volumeId } = await boundClaim(cluster, "interrupted", { node: "node-a" });
      const nodeA = cluster.node("node-a");
      nodeA.freezeDriver();
      try {
        await admin.core.deleteNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: "interrupted",
        });
        await waitFor(
          async () => (await nodeA.calls("DeleteVolume")).some((call) => call.code === null),
          { description: "DeleteVolume in flight" },
        );
        await nodeA.agent!.kill();
      } finally {
        nodeA.thawDriver();
      }
      assert.ok(
        await admin.core.readPersistentVolume({ name: pvName }),
        "the PV outlives the killed agent",
      );
      await nodeA.agent!.restart();
      await waitFor(async () => {
        const list = await admin.core.listPersistentVolume({
          fieldSelector: `metadata.name=${pvName}`,
        });
        return list.items.length === 0;
      }, { description: "the PV deleted after the restart", timeoutMs: 60_000 });
      assert.ok(!(await volumeIds(cluster, "node-a")).includes(volumeId));
    },
  );

  await step(
    t,
    cluster,
    "a PV with a VolumeAttachment is not deleted until the attachment is gone",
    async () => {
      await createClaimAndPod(admin, NS, {
        name: "attached",
        storageClass: FAST,
        size: "1Gi",
        node: "node-a",
      });
      const claim = await waitForClaimBound(admin, { namespace: NS, name: "attached" });
      const pvName = claim.spec!.volumeName!;
      const attachment = await waitFor(async () => {
        const list = await admin.storage.listVolumeAttachment();
        return list.items.find((va) => va.spec.source.persistentVolumeName === pvName);
      }, { description: "the attach/detach controller's VolumeAttachment", timeoutMs: 60_000 });
      const vaName = attachment.metadata!.name!;
      // The external-attacher, absent here, would hold this finalizer until the volume is detached.
      await admin.storage.patchVolumeAttachment({
        name: vaName,
        body: { metadata: { finalizers: ["external-attacher/hostpath-csi-k8s-io"] } },
      }, mergePatch);
      await forceDeletePod(admin, NS, "attached");
      await admin.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name: "attached" });
      await waitFor(async () => {
        const events = await pvEvents(cluster, pvName);
        return events.some((event) =>
          event.message === `persistentvolume ${pvName} is still attached to node node-a`
        );
      }, { description: "the attach guard's event", timeoutMs: 60_000 });
      const pv = await admin.core.readPersistentVolume({ name: pvName });
      assert.ok(
        (await volumeIds(cluster, "node-a")).includes(pv.spec!.csi!.volumeHandle),
        "the volume is still there",
      );
      // Detaching: without an external-attacher the attach never completed, so the test plays
      // its part: drop the finalizer and delete the attachment.
      await admin.storage.patchVolumeAttachment({
        name: vaName,
        body: { metadata: { finalizers: null } },
      }, mergePatch);
      await admin.storage.deleteVolumeAttachment({ name: vaName }).catch(() => {});
      await waitFor(async () => {
        const list = await admin.core.listPersistentVolume({
          fieldSelector: `metadata.name=${pvName}`,
        });
        return list.items.length === 0;
      }, { description: "the PV deleted once the attachment is gone", timeoutMs: 60_000 });
    },
  );
  await step(
    t,
    cluster,
    "a PV without node affinity is refused by every agent, with a Warning",
    async () => {
      await admin.core.createPersistentVolume({
        body: {
          metadata: {
            name: "no-affinity",
            annotations: { "pv.kubernetes.io/provisioned-by": cluster.driverName },
          },
          spec: {
            capacity: { storage: "1Gi" },
            accessModes: ["ReadWriteOnce"],
            persistentVolumeReclaimPolicy: "Delete",
            csi: { driver: cluster.driverName, volumeHandle: "made-by-hand" },
            // A claim that does not exist: the PV controller marks the PV Released.
            claimRef: { namespace: NS, name: "gone", uid: "00000000-0000-0000-0000-000000000000" },
          },
        },
      });
      const refusals = await waitFor(async () => {
        const events = (await pvEvents(cluster, "no-affinity"))
          .filter((event) => event.reason === "VolumeDeleteRefused");
        return events.length === 2 ? events : undefined;
      }, { description: "a VolumeDeleteRefused event from each node's agent" });
      assert.deepEqual(refusals.map((event) => event.source?.host).sort(), ["node-a", "node-b"]);
      const pv = await admin.core.readPersistentVolume({ name: "no-affinity" });
      assert.equal(pv.status?.phase, "Released");
      for (const node of cluster.nodes) {
        const calls = await node.calls("DeleteVolume");
        const tried = calls.some((call) =>
          (call.request as { volume_id?: string }).volume_id === "made-by-hand"
        );
        assert.ok(!tried, `${node.name} tried to delete it`);
      }
    },
  );
});

// The test driver: failing exactly three times, then succeeding, is fault injection.
Deno.test("the agent retries a failing DeleteVolume with an event per failure", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a"],
    driver: "test",
    storageCapacity: false,
    driverOptions: { capacity: { fast: "10Gi" } },
  });
  await startOurAgents(cluster, { args: ARGS });
  await createNamespace(cluster.admin, NS);
  await step(
    t,
    cluster,
    "DeleteVolume failing three times, then succeeding: PV gone, VolumeFailedDelete x3",
    async () => {
      const { pvName } = await boundClaim(cluster, "flaky", {
        node: "node-a",
        storageClass: "test-fast",
      });
      await cluster.node("node-a").control.setFault({
        method: "DeleteVolume",
        code: "INTERNAL",
        message: "disk busy",
        times: 3,
      });
      await deleteClaimAndWaitGone(cluster, "flaky", pvName);
      const failures = await waitFor(async () => {
        const events = (await pvEvents(cluster, pvName)).filter((event) =>
          event.reason === "VolumeFailedDelete"
        );
        const count = events.reduce((sum, event) => sum + (event.count ?? 1), 0);
        return count === 3 ? events : undefined;
      }, { description: "three VolumeFailedDelete events" });
      assert.ok(
        failures.every((event) => event.message === "rpc error: code = Internal desc = disk busy"),
      );
    },
  );
});
