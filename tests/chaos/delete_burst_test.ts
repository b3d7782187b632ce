/**
 * Chaos on the delete path: 50 Bound claims deleted at once, the agent
 * SIGKILLed at random moments while their released PVs are deleted, once
 * with every DeleteVolume taking 1-2 s, once with answers lost on top (the
 * driver deletes the volume, then the answer fails, hangs past --timeout or
 * its connection is cut). Every released PV must be deleted by the agent
 * (a DELETE of it in kube-apiserver's audit log) and never created again,
 * and its volume gone from the driver. Both runs happen with the driver's
 * volume IDs random and made from the volume names. (Why a second
 * successful DELETE of a PV is allowed: pvAudit in support.ts.)
 *
 * Why the test driver and not the hostpath one: a latency of 1-2 s per
 * DeleteVolume and lost answers are faults only it can inject.
 */
import assert from "node:assert/strict";
import { readAuditEvents } from "../cluster/audit.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { claimsIn, createNamespace, waitClaimsBound } from "../cluster/workloads.ts";
import { VOLUME_IDS, type VolumeIds } from "../csi_driver/config.ts";
import type { FaultSpec, LostAnswer } from "../csi_driver/types.ts";
import {
  between,
  callCounts,
  ChaosAgent,
  chaosSeed,
  createBurst,
  ledger,
  pvAudit,
  report,
  seededRandom,
  startChaosCluster,
} from "./support.ts";

const CLAIMS = 50;
const KILLS = 5;
const LATENCY = { latencyMs: 1000, latencyMaxMs: 2000 };

/**
 * Binds a burst, arms the fault, deletes every claim and kills the agent at
 * random moments until their PVs are gone; checks and prints the counts.
 */
async function deleteBurst(
  cluster: RunningCluster,
  agent: ChaosAgent,
  options: {
    namespace: string;
    random: () => number;
    faults: () => FaultSpec;
    volumeIds: VolumeIds;
  },
): Promise<void> {
  const { namespace, random } = options;
  const node = agent.node;
  await createNamespace(cluster.admin, namespace);
  await createBurst(cluster, {
    namespace,
    count: CLAIMS,
    nodes: [node.name],
    storageClass: cluster.storageClassName("fast"),
  });
  await waitClaimsBound(cluster.admin, namespace, { count: CLAIMS, timeoutMs: 120_000 });
  const pvNames = new Set(
    (await claimsIn(cluster.admin, namespace)).map((c) => c.spec!.volumeName!),
  );
  const handles = new Set(
    (await cluster.admin.core.listPersistentVolume()).items
      .filter((pv) => pvNames.has(pv.metadata!.name!)).map((pv) => pv.spec!.csi!.volumeHandle),
  );
  await node.control.clearCalls();
  const armed: string[] = [];
  const arm = async () => {
    const fault = options.faults();
    armed.push(fault.lostAnswer ?? "latency");
    await node.control.setFault(fault);
  };
  await arm();
  const kills = agent.kills;
  const started = performance.now();
  await Promise.all(
    [...Array(CLAIMS).keys()].map((i) =>
      cluster.admin.core.deleteNamespacedPersistentVolumeClaim({ namespace, name: `c-${i}` })
    ),
  );
  const remaining = async () =>
    (await cluster.admin.core.listPersistentVolume()).items.filter((pv) =>
      pvNames.has(pv.metadata!.name!)
    ).length;
  const remainingAtKills: number[] = [];
  for (let kill = 0; kill < KILLS; kill++) {
    await delay(between(random, 1000, 3000));
    const left = await remaining();
    if (left === 0) break;
    remainingAtKills.push(left);
    await agent.kill();
    await arm();
  }
  assert.equal(remainingAtKills.length, KILLS, `${KILLS} kills before every PV was deleted`);
  await waitFor(async () => (await remaining()) === 0, {
    description: `the ${CLAIMS} released PVs of ${namespace} deleted`,
    timeoutMs: 180_000,
    intervalMs: 500,
  });
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  await node.control.clearFaults();
  const events = await readAuditEvents(cluster.auditLogPath!);
  const audit = pvAudit(events, pvNames, { deleted: true, endings: agent.endings });
  const left = [...await node.volumes()].filter((volume) => handles.has(volume.id));
  report(`delete-burst ${namespace} ids=${options.volumeIds}`, {
    claims: CLAIMS,
    kills: agent.kills - kills,
    "PVs left at kills": remainingAtKills.join("/"),
    faults: armed.join("/"),
    ...await callCounts(node, "DeleteVolume"),
    "exits on a cut connection": agent.selfExits,
  }, {
    "PVs deleted": pvNames.size - (await remaining()),
    "PVs deleted by someone else": audit.notDeleted.length,
    "PVs not created once": audit.notCreatedOnce.length,
    "PVs with two successful DELETEs": audit.deletedTwice.length,
    "volumes left": left.length,
    seconds,
  });
  assert.deepEqual(audit.notDeleted, [], "PVs without a DELETE by the agent");
  assert.deepEqual(audit.notCreatedOnce, [], "PVs created again (or never by the agent)");
  assert.deepEqual(audit.deletedTwiceWithoutEnding, [], "PVs deleted twice with no kill between");
  assert.deepEqual(left.map((volume) => volume.name), [], "volumes of deleted PVs left");
  const counted = await ledger(cluster, [namespace]);
  assert.deepEqual(counted.leaks, [], "volumes without a PV");
}

for (const volumeIds of VOLUME_IDS) {
  Deno.test(`chaos: the agent SIGKILLed at random moments while 50 released PVs are deleted (volume IDs: ${volumeIds})`, async (t) => {
    await deleteBursts(t, volumeIds);
  });
}

async function deleteBursts(t: Deno.TestContext, volumeIds: VolumeIds): Promise<void> {
  const seed = chaosSeed();
  const random = seededRandom(seed);
  console.log(`CHAOS delete-burst ids=${volumeIds} seed ${seed}`);
  await using cluster = await startChaosCluster({ capacity: "100Gi", auditLog: true, volumeIds });
  const agent = new ChaosAgent(cluster.node("node-a"));
  try {
    await t.step("DeleteVolume takes 1-2 s", async () => {
      await deleteBurst(cluster, agent, {
        namespace: "delete-latency",
        random,
        volumeIds,
        faults: () => ({ method: "DeleteVolume", ...LATENCY }),
      });
    });
    await t.step("DeleteVolume takes 1-2 s and 30% of its answers are lost", async () => {
      // The last armed (after the last kill) is "fail": a cut while the last PVs go only adds restarts.
      const modes: LostAnswer[] = ["cut", "hang", "fail"];
      let next = 0;
      await deleteBurst(cluster, agent, {
        namespace: "delete-lost",
        random,
        volumeIds,
        faults: () => ({
          method: "DeleteVolume",
          ...LATENCY,
          lostAnswer: modes[next++ % modes.length]!,
          probability: 0.3,
        }),
      });
    });
  } finally {
    await agent.stop();
  }
}
