/**
 * Chaos with volume IDs made from volume names (as most LVM, ZFS and
 * directory drivers make them), on two nodes: a claim's volume made on
 * node-a, node-a's agent SIGKILLed before it saved the PV, the claim then
 * selected to node-b and provisioned there, whose volume has the same ID.
 * When node-a's agent comes back, its journal still names the volume; the
 * PV it finds of that name is node-b's, so node-a's volume must be deleted,
 * not taken as held by that PV.
 *
 * Why the test driver: it makes IDs from names (--volume-ids name) and can
 * hold CreateVolume's answer back after the work.
 */
import assert from "node:assert/strict";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import { mergePatch } from "../integration/support.ts";
import {
  assertClean,
  createClaim,
  report,
  settledLedger,
  startChaosCluster,
  volumeNames,
} from "./support.ts";

Deno.test("chaos: a claim re-selected to node-b after node-a's agent was killed with its volume made (volume IDs from names): node-a's volume is deleted", async () => {
  await using cluster = await startChaosCluster({
    capacity: "10Gi",
    nodes: ["node-a", "node-b"],
    volumeIds: "name",
    agentArgs: ["--timeout=60s"],
  });
  const [a, b] = [cluster.node("node-a"), cluster.node("node-b")];
  const namespace = "reselected";
  await createNamespace(cluster.admin, namespace);
  await a.control.setFault({ method: "CreateVolume", lostAnswer: "hang" });
  const storageClass = cluster.storageClassName("fast");
  const uid = await createClaim(cluster, { namespace, name: "moved", node: a.name, storageClass });
  const volume = `pvc-${uid}`;
  await waitFor(async () => (await volumeNames(a)).has(volume), {
    description: "node-a's volume made",
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  await a.agent!.kill();
  await cluster.admin.core.patchNamespacedPersistentVolumeClaim({
    namespace,
    name: "moved",
    body: { metadata: { annotations: { "volume.kubernetes.io/selected-node": b.name } } },
  }, mergePatch);
  await waitForClaimBound(cluster.admin, { namespace, name: "moved" });
  await a.control.clearFaults();
  await a.agent!.restart();
  const counted = await settledLedger(cluster, [namespace], {
    expectVolumes: 1,
    expectPvs: 1,
    timeoutMs: 45_000,
  }).catch(async (error) => {
    report("reselected ids=name", { "claims re-selected to node-b": 1 }, {
      "node-a volumes left": (await volumeNames(a)).size,
    });
    throw error;
  });
  const onA = await volumeNames(a);
  const onB = await volumeNames(b);
  report(
    "reselected ids=name",
    {
      "volume made on node-a, no PV, agent SIGKILLed": 1,
      "claims re-selected to node-b": 1,
    },
    counted,
    {
      "node-a volumes left": onA.size,
      "node-b volumes": onB.size,
      "DeleteVolume calls on node-a": (await a.calls("DeleteVolume")).length,
    },
  );
  assertClean(counted, { bound: 1 });
  assert.deepEqual([...onA], [], "node-a's volume of the re-selected claim deleted");
  assert.deepEqual([...onB], [volume], "node-b holds the claim's volume, same ID");
});
