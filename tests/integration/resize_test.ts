/**
 * Volume expansion on the node (--enable-resizer) on a real control plane,
 * with the upstream hostpath driver: it has EXPAND_VOLUME (controller and
 * node) and answers node_expansion_required, so an expanded claim ends with
 * FileSystemResizePending. There is no kubelet in the test cluster, so the
 * node expansion that would clear it never runs: the claim's capacity stays
 * at its first size, as on a node whose pod was not restarted.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { runExplain } from "./explain_support.ts";
import { agentEvents, startOurAgents, step, waitForClaimEvent } from "./support.ts";
import {
  allowExpansion,
  boundClaimOf,
  MAX_VOLUME_BYTES,
  requestSize,
  waitForView,
} from "./resize_support.ts";

const NS = "resize";
const NODE = "node-a";
const Gi = 2n ** 30n;
const ARGS = [
  "--enable-resizer",
  "--enable-capacity",
  "--capacity-ownerref-level=-1",
  "--capacity-poll-interval=1m",
  "--retry-interval-start=200ms",
  "--retry-interval-max=2s",
  "-v=4",
];

/** The agent's Events on the claim but those of its provisioning. */
const reasonsOf = async (cluster: RunningCluster, name: string) =>
  (await agentEvents(cluster, { namespace: NS, name }))
    .filter((event) => !event.reason?.startsWith("Provisioning"))
    .map((event) => `${event.type} ${event.reason}`);

/** Waits for the agent's Events on the claim (written in the background) to be `expected`. */
async function waitForReasons(cluster: RunningCluster, name: string, expected: string[]) {
  let last: string[] = [];
  await waitFor(async () => {
    last = await reasonsOf(cluster, name);
    return last.length >= expected.length;
  }, { description: `Events ${expected} on ${name}`, timeoutMs: 10_000 }).catch(() => {});
  assert.deepEqual(last, expected);
}

/** The ControllerExpandVolume calls the driver got for a volume: their required bytes. */
async function expandCalls(cluster: RunningCluster, volumeId: string): Promise<string[]> {
  const calls = await cluster.node(NODE).calls("ControllerExpandVolume");
  return calls
    .map((call) =>
      call.request as { volume_id: string; capacity_range?: { required_bytes: string } }
    )
    .filter((request) => request.volume_id === volumeId)
    .map((request) => request.capacity_range?.required_bytes ?? "");
}

async function volumeIdOf(cluster: RunningCluster, pvName: string): Promise<string> {
  return (await cluster.admin.core.readPersistentVolume({ name: pvName })).spec!.csi!.volumeHandle;
}

/** explain's verdict line on a claim of the namespace. */
async function verdictOf(cluster: RunningCluster, name: string): Promise<string> {
  const explained = await runExplain(["-n", NS, name], { KUBECONFIG: cluster.kubeconfigPath });
  assert.equal(explained.code, 0, explained.stderr);
  return explained.verdict;
}

/** This node's published capacity of the class, in bytes. */
async function publishedBytes(cluster: RunningCluster, className: string): Promise<string> {
  const list = await cluster.admin.storage.listNamespacedCSIStorageCapacity({
    namespace: cluster.agentNamespace,
  });
  const object = list.items.find((item) => item.storageClassName === className);
  return String(object?.capacity ?? "");
}

Deno.test("the agent expands its node's volumes as external-resizer does, on a real control plane", async (t) => {
  await using cluster = await startCluster({
    nodes: [NODE],
    driverOptions: {
      capacity: { fast: "10Gi" },
      recordCalls: true,
      extraArgs: [`--max-volume-size=${MAX_VOLUME_BYTES}`],
    },
  });
  const className = cluster.storageClassName("fast");
  await allowExpansion(cluster, className);
  await createNamespace(cluster.admin, NS);
  await startOurAgents(cluster, { args: ARGS });

  await step(
    t,
    cluster,
    "a bigger request: PV grown, FileSystemResizePending, Events",
    async () => {
      const ref = { namespace: NS, name: "grow" };
      const pvName = await boundClaimOf(cluster, ref, { node: NODE, className });
      await waitFor(async () => (await publishedBytes(cluster, className)) === "9Gi", {
        description: "capacity published after the claim",
      });
      await requestSize(cluster, ref, "2Gi");
      const view = await waitForView(
        cluster,
        ref,
        (v) => v.conditions.includes("FileSystemResizePending"),
        "FileSystemResizePending",
      );
      assert.deepEqual(view, {
        pvCapacity: "2Gi",
        capacity: "1Gi",
        allocated: "2Gi",
        status: "NodeResizePending",
        conditions: ["Resizing", "FileSystemResizePending"],
        messages: {
          Resizing: "",
          FileSystemResizePending:
            "Waiting for user to (re-)start a pod to finish file system resize of volume on node.",
        },
      });
      await waitForReasons(cluster, "grow", [
        "Normal Resizing",
        "Normal FileSystemResizeRequired",
      ]);
      assert.deepEqual(await expandCalls(cluster, await volumeIdOf(cluster, pvName)), [
        String(2n * Gi),
      ]);
      assert.match(
        await verdictOf(cluster, "grow"),
        /; volume expanded to 2Gi; the file system is grown by the kubelet when a pod using the claim \(re\)starts on the node$/,
      );
      // The expansion took room from the pool: published again at once, not at the next poll.
      await waitFor(async () => (await publishedBytes(cluster, className)) === "8Gi", {
        description: "capacity refreshed after the expansion",
        timeoutMs: 10_000,
      });
    },
  );

  await step(
    t,
    cluster,
    "beyond the pool: a Warning naming the node; a lowered request recovers",
    async () => {
      const ref = { namespace: NS, name: "toobig" };
      await boundClaimOf(cluster, ref, { node: NODE, className });
      await requestSize(cluster, ref, "20Gi");
      const failed = await waitForView(
        cluster,
        ref,
        (v) => v.status === "ControllerResizeInfeasible",
        "ControllerResizeInfeasible",
      );
      assert.equal(failed.pvCapacity, "1Gi");
      assert.equal(failed.allocated, "20Gi");
      assert.deepEqual(failed.conditions, ["Resizing", "ControllerResizeError"]);
      assert.match(
        failed.messages["ControllerResizeError"]!,
        /^failed to expand pvc with rpc error: code = OutOfRange/,
      );
      const failure = await waitForClaimEvent(cluster, ref, { reason: "VolumeResizeFailed" });
      assert.equal(failure.type, "Warning");
      assert.match(
        failure.message ?? "",
        /by resizer "hostpath.csi.k8s.io" failed: rpc error: code = OutOfRange/,
      );
      const pool = await waitForClaimEvent(cluster, ref, { reason: "ExpansionExceedsCapacity" });
      assert.equal(pool.type, "Warning");
      assert.match(
        pool?.message ?? "",
        /^node node-a cannot expand this volume to 20Gi: it needs 19Gi more and the node published 7Gi free/,
      );

      assert.match(
        await verdictOf(cluster, "toobig"),
        /; expansion to 20Gi failed: failed to expand pvc with rpc error: code = OutOfRange.*; lower the request \(not below 1Gi\) to recover$/,
      );

      await requestSize(cluster, ref, "3Gi");
      const recovered = await waitForView(
        cluster,
        ref,
        (v) => v.status === "NodeResizePending",
        "recovered to 3Gi",
      );
      assert.deepEqual(
        [recovered.pvCapacity, recovered.allocated, recovered.conditions],
        ["3Gi", "3Gi", ["Resizing", "FileSystemResizePending"]],
      );
    },
  );

  await step(
    t,
    cluster,
    "killed during ControllerExpandVolume: finished after the restart to the recorded size",
    async () => {
      const ref = { namespace: NS, name: "killed" };
      const pvName = await boundClaimOf(cluster, ref, { node: NODE, className });
      const volumeId = await volumeIdOf(cluster, pvName);
      const node = cluster.node(NODE);
      // SIGSTOP: the call reaches the driver and hangs there, its answer lost with the agent.
      node.freezeDriver();
      try {
        await requestSize(cluster, ref, "4Gi");
        await waitForView(cluster, ref, (v) => v.allocated === "4Gi", "the target recorded first");
        await waitFor(async () => (await expandCalls(cluster, volumeId)).length === 1, {
          description: "ControllerExpandVolume in flight",
        });
        assert.equal((await node.agent!.kill()).signal, "SIGKILL");
      } finally {
        node.thawDriver();
      }
      // Asked for more while the agent was down: the recorded expansion is finished first.
      await requestSize(cluster, ref, "6Gi");
      await node.agent!.restart();
      const view = await waitForView(
        cluster,
        ref,
        (v) => v.status === "NodeResizePending",
        "the expansion finished after the restart",
      );
      assert.deepEqual([view.pvCapacity, view.allocated], ["4Gi", "4Gi"]);
      const calls = await expandCalls(cluster, volumeId);
      assert.ok(calls.length >= 2, `calls ${calls}`);
      assert.deepEqual(new Set(calls), new Set([String(4n * Gi)]), "never to another size");
    },
  );
});
