/**
 * A WaitForFirstConsumer claim selected to the node is provisioned before the
 * PV controller names a provisioner on it (lib/provision/decide.ts
 * decideUnnamed); any other claim without a named provisioner waits silently.
 *
 * kube-controller-manager runs here without its PV controller
 * (persistentvolume-binder-controller), on purpose: with it, the controller
 * writes `volume.kubernetes.io/storage-provisioner` within milliseconds and
 * whether the agent was first is a race the test could not see. Without it
 * nobody names a provisioner, so a PV exists only if the agent did not wait,
 * and nothing binds it (the claim stays Pending).
 */
import assert from "node:assert/strict";
import { ANN_STORAGE_PROVISIONER } from "../../lib/model/keys.ts";
import { startCluster } from "../cluster/cluster.ts";
import { CONTROLLERS } from "../cluster/control_plane.ts";
import { delay } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { createImmediateClass } from "./immediate_support.ts";
import {
  agentEvents,
  claimVolumes,
  createVolumeCallsFor,
  selectedClaim,
  startOurAgents,
  waitForClaimEvent,
} from "./support.ts";

const NAMESPACE = "unnamed";

/** A claim as the scheduler leaves it before the PV controller has seen it: node selected, no provisioner named. */
function unnamedClaim(name: string, storageClass: string, driverName: string) {
  const body = selectedClaim(name, { node: "node-a", storageClass, driverName });
  delete body.metadata!.annotations![ANN_STORAGE_PROVISIONER];
  return body;
}

Deno.test("a WaitForFirstConsumer claim selected to the node is provisioned before any provisioner is named on it; others wait silently", async () => {
  await using cluster = await startCluster({
    nodes: ["node-a"],
    driverOptions: { recordCalls: true },
    storageCapacity: false,
    controllers: CONTROLLERS.filter((name) => name !== "persistentvolume-binder-controller"),
  });
  const { admin } = cluster;
  await startOurAgents(cluster, { args: ["--retry-interval-start=200ms", "-v=4"] });
  await createNamespace(admin, NAMESPACE);
  await createImmediateClass(cluster, { name: "instant", pool: "fast" });
  await admin.storage.createStorageClass({
    body: {
      metadata: { name: "elsewhere" },
      provisioner: "other.csi.example.com",
      volumeBindingMode: "WaitForFirstConsumer",
    },
  });
  const create = (name: string, storageClass: string) =>
    admin.core.createNamespacedPersistentVolumeClaim({
      namespace: NAMESPACE,
      body: unnamedClaim(name, storageClass, cluster.driverName),
    });
  const immediate = await create("immediate", "instant");
  const foreign = await create("foreign", "elsewhere");
  const missing = await create("missing", "no-such-class");
  const wffc = await create("wffc", "csi-hostpath-fast");

  await waitForClaimEvent(cluster, { namespace: NAMESPACE, name: "wffc" }, {
    reason: "ProvisioningSucceeded",
  });
  const [pv] = await claimVolumes(cluster, wffc.metadata!.uid!);
  assert.equal(pv?.metadata?.name, `pvc-${wffc.metadata!.uid}`);
  assert.equal(pv?.spec?.claimRef?.uid, wffc.metadata!.uid);
  assert.equal(pv?.spec?.csi?.driver, cluster.driverName);
  const claim = await admin.core.readNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
    name: "wffc",
  });
  assert.equal(claim.metadata?.annotations?.[ANN_STORAGE_PROVISIONER], undefined);

  // The other three were created first; give the agent time to misjudge them.
  await delay(3_000);
  for (const other of [immediate, foreign, missing]) {
    const ref = { namespace: NAMESPACE, name: other.metadata!.name! };
    assert.deepEqual(await agentEvents(cluster, ref), [], `no Event on ${ref.name}`);
    assert.deepEqual(
      await claimVolumes(cluster, other.metadata!.uid!),
      [],
      `no PV for ${ref.name}`,
    );
    assert.deepEqual(
      await createVolumeCallsFor(cluster.node("node-a"), other.metadata!.uid!),
      [],
      `no CreateVolume for ${ref.name}`,
    );
  }
  const calls = await createVolumeCallsFor(cluster.node("node-a"), wffc.metadata!.uid!);
  assert.equal(calls.length, 1, "one CreateVolume for wffc");
});
