/**
 * Chaos: the agent SIGKILLed with a volume made and no PV, then, while it is
 * down, the claim deleted and the namespace of its provisioner Secret
 * deleted with the Secret in it. Back up, the agent must still delete the
 * volume, without the Secret (as the delete path does for a PV), instead of
 * keeping the journal entry and retrying for ever.
 *
 * Why the test driver: it can hold CreateVolume's answer back after the work.
 */
import assert from "node:assert/strict";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import {
  createClaim,
  deleteClaim,
  report,
  settledLedger,
  startChaosCluster,
  volumeNames,
} from "./support.ts";

const VAULT = "vault";

Deno.test("chaos: a claim's volume made, the agent killed, the claim and its Secret's namespace deleted: the volume is deleted without the Secret", async () => {
  await using cluster = await startChaosCluster({ capacity: "10Gi", agentArgs: ["--timeout=60s"] });
  const node = cluster.node("node-a");
  const namespace = "secret-gone";
  await createNamespace(cluster.admin, namespace);
  await createNamespace(cluster.admin, VAULT);
  await cluster.admin.core.createNamespacedSecret({
    namespace: VAULT,
    body: { metadata: { name: "creds" }, stringData: { token: "t1" } },
  });
  await cluster.admin.storage.createStorageClass({
    body: {
      metadata: { name: "with-secret" },
      provisioner: cluster.driverName,
      volumeBindingMode: "WaitForFirstConsumer",
      reclaimPolicy: "Delete",
      parameters: {
        kind: "fast",
        "csi.storage.k8s.io/provisioner-secret-name": "creds",
        "csi.storage.k8s.io/provisioner-secret-namespace": VAULT,
      },
    },
  });
  await node.control.setFault({ method: "CreateVolume", lostAnswer: "hang" });
  const uid = await createClaim(cluster, {
    namespace,
    name: "gone",
    node: node.name,
    storageClass: "with-secret",
  });
  await waitFor(async () => (await volumeNames(node)).has(`pvc-${uid}`), {
    description: "the volume made",
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  await node.agent!.kill();
  await deleteClaim(cluster, { namespace, name: "gone" });
  await cluster.admin.core.deleteNamespace({ name: VAULT });
  await waitFor(async () => {
    try {
      await cluster.admin.core.readNamespacedSecret({ namespace: VAULT, name: "creds" });
      return false;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return true;
      throw error;
    }
  }, { description: "the Secret gone with its namespace", timeoutMs: 60_000, intervalMs: 500 });
  await node.control.clearFaults();
  await node.agent!.restart();
  const counted = await settledLedger(cluster, [namespace], {
    expectVolumes: 0,
    expectPvs: 0,
    timeoutMs: 45_000,
  });
  const deletes = await node.calls("DeleteVolume");
  report(
    "secret-gone",
    {
      "volume made, no PV, agent SIGKILLed": 1,
      "claim deleted": 1,
      "Secret's namespace deleted": 1,
    },
    counted,
    { "DeleteVolume calls": deletes.length },
  );
  assert.deepEqual(counted.leaks, []);
  assert.equal(deletes.length, 1, "one DeleteVolume, without secrets");
  assert.deepEqual(deletes[0]?.secretKeys ?? [], [], "no secrets were sent");
});
