/**
 * Upstream external-provisioner's rbac.yaml alone, as an operator who swaps
 * the sidecar for the agent keeps it: update, not patch, on claims and
 * VolumeSnapshots. Two agents race for an Immediate claim, a claim is
 * restored from a snapshot and another cloned, and the clone's source, once
 * deleted, loses its cloning-protection finalizer. kube-apiserver's audit log then
 * lists every call the agents made; the only refusals are each agent's
 * first patch of a claim and of a VolumeSnapshot, and each write went on as
 * upstream's read and update. (tests/e2e/rbac_test.ts audits deploy/'s
 * RBAC, which grants patch.)
 */

import assert from "node:assert/strict";
import { auditCall, readAuditEvents } from "../cluster/audit.ts";
import { startCluster } from "../cluster/cluster.ts";
import { UPSTREAM_PATCH_FALLBACKS } from "../cluster/rbac.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { createVolumeSnapshot, waitForSnapshotReady } from "../cluster/snapshots.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace, forceDeletePod, waitForClaimBound } from "../cluster/workloads.ts";
import { createImmediateClass } from "./immediate_support.ts";
import { claimFinalizers, CLONE_FINALIZER, createClaimOn } from "./snapshot_support.ts";
import { startOurAgents, step } from "./support.ts";

const NS = "upstream-rbac";
const NODES = ["node-a", "node-b"];
const ARGS = [
  "-v=2",
  "--retry-interval-start=200ms",
  "--retry-interval-max=2s",
  "--node-deployment-base-delay=200ms",
];
/** What upstream's rbac.yaml refuses and the agents fall back from: once per agent at most. */
const REFUSED_ONCE = [...UPSTREAM_PATCH_FALLBACKS.keys()];
/** The writes each path made instead: upstream's Update of the object read. */
const USED = [
  "get persistentvolumeclaims",
  "get snapshot.storage.k8s.io/volumesnapshots",
  ...UPSTREAM_PATCH_FALLBACKS.values(),
];

/** The agents' ServiceAccounts (startAgent's, in the cluster's default agent namespace). */
const USERS = NODES.map((node) => `system:serviceaccount:csi-provisioner:csi-provisioner-${node}`);

/** Every call of the agents, with its answers, e.g. "update persistentvolumeclaims" → [200, 200]. */
async function callsByAnswer(cluster: RunningCluster): Promise<Map<string, number[]>> {
  const users = new Set(USERS);
  const calls = new Map<string, number[]>();
  for (const event of await readAuditEvents(cluster.auditLogPath!)) {
    if (!users.has(event.user.username) || event.stage !== "ResponseComplete") continue;
    const call = auditCall(event);
    calls.set(call, [...(calls.get(call) ?? []), event.responseStatus?.code ?? 0]);
  }
  return calls;
}

function table(calls: Map<string, number[]>): string {
  return [...calls].sort(([a], [b]) => a.localeCompare(b)).map(([call, codes]) =>
    `${call.padEnd(56)} ${codes.join(" ")}`
  ).join("\n");
}

Deno.test("upstream's rbac.yaml alone: the Immediate race, a restore and a clone", async (t) => {
  await using cluster = await startCluster({
    nodes: NODES,
    driverOptions: { capacity: { fast: "10Gi" } },
    snapshots: true,
    storageCapacity: false,
    auditLog: { users: USERS },
  });
  const { admin } = cluster;
  await createNamespace(admin, NS);
  await startOurAgents(cluster, { args: ARGS, rbac: "upstream" });

  await step(
    t,
    cluster,
    "the Immediate race: one node wins selected-node, the claim binds",
    async () => {
      await createImmediateClass(cluster, { name: "immediate", pool: "fast" });
      await createClaimOn(cluster, {
        namespace: NS,
        name: "raced",
        node: "node-a",
        pod: false,
        storageClass: "immediate",
      });
      const bound = await waitForClaimBound(admin, { namespace: NS, name: "raced" });
      const owner = bound.metadata?.annotations?.["volume.kubernetes.io/selected-node"];
      assert.ok(owner !== undefined && NODES.includes(owner), `selected-node ${owner}`);
    },
  );

  await step(t, cluster, "a restore and a clone, the source protected and released", async () => {
    await createClaimOn(cluster, { namespace: NS, name: "origin", node: "node-a" });
    await waitForClaimBound(admin, { namespace: NS, name: "origin" });
    await createVolumeSnapshot(admin, { namespace: NS, name: "origin-snap", claim: "origin" });
    await waitForSnapshotReady(admin, { namespace: NS, name: "origin-snap" });
    await createClaimOn(cluster, {
      namespace: NS,
      name: "restored",
      node: "node-a",
      dataSource: { kind: "VolumeSnapshot", name: "origin-snap" },
    });
    await createClaimOn(cluster, {
      namespace: NS,
      name: "cloned",
      node: "node-a",
      dataSource: { kind: "PersistentVolumeClaim", name: "origin" },
    });
    await waitForClaimBound(admin, { namespace: NS, name: "restored" });
    await waitForClaimBound(admin, { namespace: NS, name: "cloned" });
    const origin = { namespace: NS, name: "origin" };
    assert.ok((await claimFinalizers(cluster, origin)).includes(CLONE_FINALIZER));
    // Deleted, the source waits on the finalizer, which its agent removes: no clone is Pending.
    await forceDeletePod(admin, NS, "origin");
    await admin.core.deleteNamespacedPersistentVolumeClaim(origin);
    await waitFor(async () => {
      const list = await admin.core.listNamespacedPersistentVolumeClaim({
        namespace: NS,
        fieldSelector: "metadata.name=origin",
      });
      return list.items.length === 0;
    }, { description: "the clone's source released and deleted", timeoutMs: 60_000 });
  });

  await step(
    t,
    cluster,
    "the audit: patch refused once per agent, upstream's update used",
    async () => {
      for (const node of cluster.nodes) assert.equal((await node.agent!.stop()).code, 0);
      const calls = await callsByAnswer(cluster);
      console.log(`\nAPI calls of the agents under upstream's rbac.yaml:\n${table(calls)}\n`);
      const refused = [...calls].filter(([, codes]) => codes.some((code) => code === 403));
      assert.deepEqual(refused.map(([call]) => call).sort(), [...REFUSED_ONCE].sort());
      for (const [call, codes] of refused) {
        assert.ok(codes.length <= NODES.length, `${call}: ${codes.join(" ")}`);
      }
      for (const call of USED) {
        assert.ok(calls.get(call)?.some((code) => code === 200), `${call} answered 200`);
      }
      const told = (await Promise.all(
        NODES.map((node) => Deno.readTextFile(`${cluster.dir}/logs/agent-${node}.log`)),
      )).join("\n").split("\n").filter((line) => line.includes("would save that read"));
      assert.ok(told.length >= 1 && told.length <= 2 * NODES.length, told.join("\n"));
    },
  );
});
