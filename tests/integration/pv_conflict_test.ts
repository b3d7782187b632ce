/**
 * A PV named as the agent's (pvc-<claim uid>) created by someone else while
 * CreateVolume runs: kube-apiserver answers the agent's save with 409, and
 * the PV it has holds another volume. The agent must not take that as its
 * own save (upstream does): its volume is deleted and a Warning on the claim
 * names both volumes.
 *
 * Why the test driver and not the hostpath one: a CreateVolume that takes
 * 3 s, so that the other PV lands first, is a fault only it can inject.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { selectedClaim, startOurAgents, waitForClaimEvent } from "./support.ts";

Deno.test("a 409 for a PV holding another volume: our volume deleted, a Warning names both", async () => {
  await using cluster = await startCluster({
    nodes: ["node-a"],
    driver: "test",
    driverOptions: { capacity: { fast: "10Gi" } },
    storageCapacity: false,
  });
  await startOurAgents(cluster);
  const node = cluster.node("node-a");
  const namespace = "conflict";
  await createNamespace(cluster.admin, namespace);
  await node.control.setFault({ method: "CreateVolume", latencyMs: 3000 });
  const claim = await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: selectedClaim("taken", {
      node: node.name,
      storageClass: cluster.storageClassName("fast"),
      size: "10Mi",
      driverName: cluster.driverName,
    }),
  });
  const pvName = `pvc-${claim.metadata!.uid}`;
  await cluster.admin.core.createPersistentVolume({
    body: {
      metadata: { name: pvName },
      spec: {
        capacity: { storage: "10Mi" },
        accessModes: ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: "Retain",
        csi: { driver: "other.csi.example.com", volumeHandle: "theirs" },
      },
    },
  });
  const event = await waitForClaimEvent(cluster, { namespace, name: "taken" }, {
    reason: "ProvisioningFailed",
    message: (text) => text.includes("already exists"),
  });
  const created = (await node.calls("CreateVolume")).filter((call) => call.codeName === "OK");
  await waitFor(async () => (await node.volumes()).length === 0, {
    description: "our volume deleted",
    timeoutMs: 30_000,
  });
  const deleted = (await node.calls("DeleteVolume")).filter((call) => call.codeName === "OK");
  const ours = (deleted[0]?.request as { volume_id?: string } | undefined)?.volume_id ?? "";
  console.log(
    `409 on ${pvName}: CreateVolume OK ${created.length}, DeleteVolume OK ${deleted.length}; ` +
      `Warning: ${event.message}`,
  );
  assert.ok(ours !== "", "DeleteVolume of our volume");
  assert.match(event.message ?? "", /theirs/, "the Warning names their volume");
  assert.ok(event.message?.includes(ours), "the Warning names our volume");
  const pv = await cluster.admin.core.readPersistentVolume({ name: pvName });
  assert.equal(pv.spec?.csi?.volumeHandle, "theirs", "their PV is left alone");
});
