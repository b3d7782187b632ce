/**
 * Chaos: a CreateVolume that goes to the background, then a final error.
 * The first call outlives the agent's --timeout (DeadlineExceeded) while the
 * driver goes on and makes the volume; the retry is answered
 * ResourceExhausted, so the claim is sent back to the scheduler. The first
 * call may still finish, so the intent must stay until the volume is found
 * and deleted: nothing may be left on the driver once the first call is done.
 *
 * Why the test driver: it does a call's work after the caller gave up
 * (lostAnswer) and answers ResourceExhausted on demand.
 */
import assert from "node:assert/strict";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { createClaim, report, settledLedger, startChaosCluster, volumeNames } from "./support.ts";

/** The first call's work takes this long: well past the chaos agents' --timeout of 3 s. */
const WORK_MS = 8000;

Deno.test("chaos: CreateVolume timed out while the driver goes on, then ResourceExhausted: the volume the first call makes is deleted", async () => {
  await using cluster = await startChaosCluster({ capacity: "10Gi" });
  const node = cluster.node("node-a");
  const namespace = "background";
  await createNamespace(cluster.admin, namespace);
  await node.control.setFault({
    method: "CreateVolume",
    latencyMs: WORK_MS,
    lostAnswer: "fail",
    times: 1,
  });
  const uid = await createClaim(cluster, {
    namespace,
    name: "late",
    node: node.name,
    storageClass: cluster.storageClassName("fast"),
  });
  const volume = `pvc-${uid}`;
  const calls = async (code: string | null) =>
    (await node.calls("CreateVolume")).filter((call) => call.codeName === code).length;
  await waitFor(async () => (await calls(null)) === 1, {
    description: "the first CreateVolume in flight",
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  await node.control.setFault({ method: "CreateVolume", latencyMs: 0, code: "RESOURCE_EXHAUSTED" });
  await waitFor(async () => (await calls("RESOURCE_EXHAUSTED")) >= 1, {
    description: "a retry answered ResourceExhausted",
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  await waitFor(async () => (await volumeNames(node)).has(volume), {
    description: "the first call's volume made",
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  await node.control.clearFaults();
  const counted = await settledLedger(cluster, [namespace], {
    expectVolumes: 0,
    expectPvs: 0,
    timeoutMs: 45_000,
  });
  report(
    "background-then-final",
    {
      "CreateVolume past --timeout, work done": 1,
      "retries answered ResourceExhausted": await calls("RESOURCE_EXHAUSTED"),
    },
    counted,
    { "DeleteVolume calls": (await node.calls("DeleteVolume")).length },
  );
  assert.deepEqual(counted.leaks, []);
  assert.deepEqual([...await volumeNames(node)], []);
});
