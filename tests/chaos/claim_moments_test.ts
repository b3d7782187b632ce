/**
 * Chaos: claims deleted, and claims deleted then created again under the
 * same name (a new uid), at the three moments a volume can leak: while
 * CreateVolume is in flight, after the driver made the volume but before
 * the agent saved its PV (the answer held back), after the answer was lost
 * (the driver made the volume and answered UNAVAILABLE: the agent retries),
 * the same with the agent frozen (SIGSTOP) while the claims are deleted and
 * recreated (one sync then sees the old intent and the new claim under the
 * same key), and while the agent is down after it was SIGKILLed with the volume made
 * and no PV (where upstream external-provisioner leaks the volume). Each time: the deleted claim leaves no
 * volume and no PV, the recreated claim ends Bound to one PV, and the
 * driver holds exactly that one volume.
 *
 * Every moment runs with the driver's volume IDs random and made from the
 * volume names (as most LVM, ZFS and directory drivers make them).
 *
 * Why the test driver and not the hostpath one: CreateVolume held in flight
 * and an answer held back after the work are faults only it can inject.
 */
import assert from "node:assert/strict";
import type { ClusterNode } from "../cluster/cluster_node.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import { VOLUME_IDS, type VolumeIds } from "../csi_driver/config.ts";
import type { FaultSpec } from "../csi_driver/types.ts";
import {
  assertClean,
  createClaim,
  deleteClaim,
  report,
  settledLedger,
  startChaosCluster,
  volumeNames,
} from "./support.ts";

/**
 * How a moment is reached once both claims exist; resolves to what it
 * injected. The agent is started again (if killed) or thawed (if frozen)
 * once the claims were deleted and recreated.
 */
type Moment = (node: ClusterNode, uids: string[]) => Promise<Record<string, unknown>>;

/** Whether the moment left the agent frozen (SIGSTOP), to be thawed after the recreate. */
const frozen = new WeakSet<ClusterNode>();

/** Until both CreateVolume calls are running at the driver (it takes 3 s each). */
const inFlight: Moment = async (node, uids) => {
  const names = new Set(uids.map((uid) => `pvc-${uid}`));
  await waitFor(async () => {
    const running = (await node.calls("CreateVolume")).filter((call) =>
      call.codeName === null && names.has((call.request as { name?: string }).name ?? "")
    );
    return running.length === names.size;
  }, { description: "both CreateVolume calls in flight", timeoutMs: 30_000, intervalMs: 100 });
  return { "CreateVolume in flight at the delete": names.size };
};

/** Until the driver made both volumes; their answers are held, so no PV is saved. */
const answerHeld: Moment = async (node, uids) => {
  await waitForVolumes(node, uids);
  return { "volumes made, answers held, no PV": uids.length };
};

/** As answerHeld, then SIGKILL: the agent is down with the volumes made and no PV. */
const agentDown: Moment = async (node, uids) => {
  await waitForVolumes(node, uids);
  await node.agent!.kill();
  return { "volumes made, no PV, agent SIGKILLed": uids.length };
};

/**
 * Until the driver made both volumes and answered each call UNAVAILABLE at
 * least once: the agent keeps the intents and retries, the claims "in
 * background" as upstream calls it.
 */
const answerLost: Moment = async (node, uids) => {
  await waitForVolumes(node, uids);
  const names = new Set(uids.map((uid) => `pvc-${uid}`));
  await waitFor(async () => {
    const lost = (await node.calls("CreateVolume")).filter((call) =>
      call.codeName === "UNAVAILABLE" && names.has((call.request as { name?: string }).name ?? "")
    );
    return new Set(lost.map((call) => (call.request as { name: string }).name)).size === names.size;
  }, { description: "both answers lost", timeoutMs: 30_000, intervalMs: 100 });
  return { "volumes made, answers lost (UNAVAILABLE), agent retrying": uids.length };
};

/**
 * As answerLost, then SIGSTOP: the claims are deleted and recreated while
 * the agent cannot see it, so that, thawed, it finds the old claim's intent
 * and a new claim with the same key but another uid in one sync.
 */
const agentFrozen: Moment = async (node, uids) => {
  await answerLost(node, uids);
  node.agent!.process.signal("SIGSTOP");
  frozen.add(node);
  return { "volumes made, answers lost, agent frozen (SIGSTOP)": uids.length };
};

async function waitForVolumes(node: ClusterNode, uids: string[]): Promise<void> {
  await waitFor(async () => {
    const names = await volumeNames(node);
    return uids.every((uid) => names.has(`pvc-${uid}`));
  }, { description: "both volumes made", timeoutMs: 30_000, intervalMs: 100 });
}

/**
 * One moment: claims `gone` and `again` created under the fault, the moment
 * reached, both deleted and `again` created anew; then faults cleared and
 * the agent running again.
 */
async function atMoment(
  cluster: RunningCluster,
  options: { namespace: string; fault: FaultSpec; volumeIds: VolumeIds },
  moment: Moment,
): Promise<void> {
  const { namespace } = options;
  const node = cluster.node("node-a");
  const storageClass = cluster.storageClassName("fast");
  await createNamespace(cluster.admin, namespace);
  await node.control.setFault(options.fault);
  const claim = (name: string) =>
    createClaim(cluster, { namespace, name, node: node.name, storageClass });
  const oldUids = [await claim("gone"), await claim("again")];
  const injected = await moment(node, oldUids);
  await Promise.all(["gone", "again"].map((name) => deleteClaim(cluster, { namespace, name })));
  const newUid = await claim("again");
  await node.control.clearFaults();
  if (frozen.delete(node)) node.agent!.process.signal("SIGCONT");
  if (!node.agent!.running) await node.agent!.restart();
  await waitForClaimBound(cluster.admin, { namespace, name: "again" });
  const counted = await settledLedger(cluster, [namespace], { expectVolumes: 1, expectPvs: 1 });
  const names = await volumeNames(node);
  const oldLeft = oldUids.filter((uid) => names.has(`pvc-${uid}`)).length;
  report(
    `claim-moments ${namespace} ids=${options.volumeIds}`,
    {
      ...injected,
      "claims deleted": 2,
      "claims recreated under the same name": 1,
    },
    counted,
    {
      "old claims' volumes left": oldLeft,
      "DeleteVolume calls": (await node.calls("DeleteVolume")).length,
    },
  );
  assertClean(counted, { bound: 1 });
  assert.equal(oldLeft, 0, "volumes of the deleted claims left");
  assert.deepEqual([...names], [`pvc-${newUid}`], "the driver holds the new claim's volume only");
  // The next moment counts from an empty driver.
  await deleteClaim(cluster, { namespace, name: "again" });
  await settledLedger(cluster, [namespace], { expectVolumes: 0, expectPvs: 0 });
  await node.control.clearCalls();
}

/** Each moment: the step's name, its namespace, the CreateVolume fault and how it is reached. */
const MOMENTS: [string, string, Omit<FaultSpec, "method">, Moment][] = [
  ["while CreateVolume is in flight", "in-flight", { latencyMs: 3000 }, inFlight],
  ["between CreateVolume and the PV save", "answer-held", { lostAnswer: "hang" }, answerHeld],
  [
    "after the answer was lost, while the agent retries",
    "answer-lost",
    { lostAnswer: "fail" },
    answerLost,
  ],
  [
    "while the agent is frozen, its answers lost",
    "agent-frozen",
    { lostAnswer: "fail" },
    agentFrozen,
  ],
  [
    "while the agent is down, killed with a volume made and no PV",
    "agent-down",
    { lostAnswer: "hang" },
    agentDown,
  ],
];

for (const volumeIds of VOLUME_IDS) {
  Deno.test(`chaos: claims deleted or recreated under the same name at each moment a volume can leak (volume IDs: ${volumeIds})`, async (t) => {
    // A long --timeout: a held answer must reach the agent once released.
    await using cluster = await startChaosCluster({
      capacity: "10Gi",
      agentArgs: ["--timeout=60s"],
      volumeIds,
    });
    for (const [name, namespace, fault, moment] of MOMENTS) {
      await t.step(name, async () => {
        const options = { namespace, fault: { method: "CreateVolume" as const, ...fault } };
        await atMoment(cluster, { ...options, volumeIds }, moment);
      });
    }
  });
}
