/**
 * Chaos: the agent SIGKILLed at ten random moments of a 100-claim burst,
 * once with every CreateVolume taking 1-2 s, once with answers lost on top
 * (the driver does the work, then the answer fails, hangs past the agent's
 * --timeout, or the connection is cut: the agent then exits, crash-only, and
 * is restarted). Every claim must end Bound to exactly one PV, and the
 * driver's volumes must be exactly the PVs' handles. Both runs happen with
 * the driver's volume IDs random and made from the volume names.
 *
 * Why the test driver and not the hostpath one: a latency of 1-2 s per
 * CreateVolume and lost answers are faults only it can inject.
 */
import assert from "node:assert/strict";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { delay } from "../cluster/wait.ts";
import { boundIn, createNamespace, waitClaimsBound } from "../cluster/workloads.ts";
import { VOLUME_IDS, type VolumeIds } from "../csi_driver/config.ts";
import type { LostAnswer } from "../csi_driver/types.ts";
import {
  assertClean,
  between,
  callCounts,
  ChaosAgent,
  chaosSeed,
  createBurst,
  report,
  seededRandom,
  settledLedger,
  startChaosCluster,
} from "./support.ts";

const CLAIMS = 100;
const KILLS = 10;
const LATENCY = { latencyMs: 1000, latencyMaxMs: 2000 };

/** The burst with kills at random moments; resolves to what was injected. */
async function killDuringBurst(
  cluster: RunningCluster,
  agent: ChaosAgent,
  options: {
    namespace: string;
    random: () => number;
    beforeKill?: (kill: number) => Promise<void>;
  },
): Promise<{ kills: number; boundAtKills: number[]; seconds: number }> {
  const { namespace, random } = options;
  await createNamespace(cluster.admin, namespace);
  const started = performance.now();
  await createBurst(cluster, {
    namespace,
    count: CLAIMS,
    nodes: [agent.node.name],
    storageClass: cluster.storageClassName("fast"),
  });
  const boundAtKills: number[] = [];
  for (let kill = 0; kill < KILLS; kill++) {
    await delay(between(random, 800, 2000));
    const bound = await boundIn(cluster.admin, namespace);
    if (bound === CLAIMS) break;
    boundAtKills.push(bound);
    await options.beforeKill?.(kill);
    await agent.kill();
  }
  assert.equal(boundAtKills.length, KILLS, `${KILLS} kills before the burst was over`);
  await waitClaimsBound(cluster.admin, namespace, { count: CLAIMS, timeoutMs: 240_000 });
  return {
    kills: boundAtKills.length,
    boundAtKills,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}

for (const volumeIds of VOLUME_IDS) {
  Deno.test(`chaos: the agent SIGKILLed 10 times at random moments of a 100-claim burst (volume IDs: ${volumeIds})`, async (t) => {
    await killBursts(t, volumeIds);
  });
}

async function killBursts(t: Deno.TestContext, volumeIds: VolumeIds): Promise<void> {
  const seed = chaosSeed();
  const random = seededRandom(seed);
  console.log(`CHAOS kill-burst ids=${volumeIds} seed ${seed}`);
  // Ten workers: the burst takes about 15 s of CreateVolume time, long enough for ten kills.
  await using cluster = await startChaosCluster({
    capacity: "100Gi",
    agentArgs: ["--worker-threads=10"],
    volumeIds,
  });
  const node = cluster.node("node-a");
  const agent = new ChaosAgent(node);
  const namespaces: string[] = [];
  try {
    await t.step("CreateVolume takes 1-2 s", async () => {
      await node.control.setFault({ method: "CreateVolume", ...LATENCY });
      namespaces.push("burst-latency");
      const injected = await killDuringBurst(cluster, agent, {
        namespace: "burst-latency",
        random,
      });
      await node.control.clearFaults();
      const counted = await settledLedger(cluster, namespaces);
      report(
        `kill-burst latency 1-2s ids=${volumeIds}`,
        {
          claims: CLAIMS,
          kills: injected.kills,
          "bound at kills": injected.boundAtKills.join("/"),
          ...await callCounts(node, "CreateVolume"),
        },
        counted,
        { seconds: injected.seconds },
      );
      assertClean(counted, { bound: CLAIMS });
      assert.equal(counted.volumes, counted.pvs);
    });
    await t.step("CreateVolume takes 1-2 s and 30% of its answers are lost", async () => {
      await node.control.clearCalls();
      const modes: LostAnswer[] = ["fail", "hang", "cut"];
      const armed: string[] = [];
      const arm = async (kill: number) => {
        const mode = modes[kill % modes.length]!;
        armed.push(mode);
        await node.control.setFault({
          method: "CreateVolume",
          ...LATENCY,
          lostAnswer: mode,
          probability: 0.3,
        });
      };
      await arm(0);
      namespaces.push("burst-lost");
      const injected = await killDuringBurst(cluster, agent, {
        namespace: "burst-lost",
        random,
        beforeKill: (kill) => arm(kill + 1),
      });
      await node.control.clearFaults();
      const calls = await callCounts(node, "CreateVolume");
      const counted = await settledLedger(cluster, namespaces);
      report(
        `kill-burst lost answers ids=${volumeIds}`,
        {
          claims: CLAIMS,
          kills: injected.kills,
          "exits on a cut connection": agent.selfExits,
          "lost-answer modes": armed.join("/"),
          ...calls,
        },
        counted,
        { seconds: injected.seconds },
      );
      assertClean(counted, { bound: 2 * CLAIMS });
      assert.equal(counted.volumes, counted.pvs);
      assert.ok(calls["answers lost or abandoned"]! > 0, "answers were lost");
    });
  } finally {
    await agent.stop();
  }
}
