/**
 * Chaos on democratic-csi's local-hostpath driver, a real driver whose
 * volume IDs are the volume names (a directory `<base>/v/<name>` per
 * volume): a burst of WaitForFirstConsumer claims provisioned while the
 * agent is SIGKILLed at random moments, a few unbound claims deleted while
 * it is down, then every claim deleted at once while it is killed again.
 * At the end every remaining claim is Bound to one PV created once and
 * never again, every released PV was deleted by the agent (kube-apiserver's
 * audit log; see pvAudit in support.ts for why a second successful DELETE
 * is allowed), no volume directory is without a PV and no PV without its
 * directory.
 *
 * This driver injects no latency and loses no answers (those are the test
 * driver's, see kill_burst_test.ts and delete_burst_test.ts): the kill
 * moments are short delays, drawn from the seeded generator (CHAOS_SEED=<n>
 * replays them), after the burst started and, for the next kills, after the
 * restarted agent bound a claim or deleted a PV again. To make sure some calls are in
 * flight at a kill, some kills happen with the driver frozen (SIGSTOP) for
 * a moment first: the calls the agent sends meanwhile wait in the socket,
 * and the driver, thawed after the kill, makes (or removes) directories
 * whose answers nobody reads.
 */
import assert from "node:assert/strict";
import { readAuditEvents } from "../cluster/audit.ts";
import type { ClusterNode } from "../cluster/cluster_node.ts";
import { DEMOCRATIC_STORAGE_CLASS } from "../cluster/democratic.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { boundIn, claimsIn, createNamespace, waitClaimsBound } from "../cluster/workloads.ts";
import {
  assertClean,
  between,
  ChaosAgent,
  chaosSeed,
  createBurst,
  deleteClaim,
  ledger,
  pvAudit,
  report,
  seededRandom,
  settledLedger,
  startChaosCluster,
} from "./support.ts";

const NAMESPACE = "democratic-chaos";
const CLAIMS = 60;
const KILLS = 6;
/** The delay before a kill, once the agent has made progress since the last one. */
const GAP_MS: [number, number] = [0, 400];
/** How long the driver stays frozen before a kill, when it is. */
const FROZEN_MS: [number, number] = [50, 300];
/** Time for the thawed driver to carry out the calls it got while frozen. */
const THAWED_MS = 300;

/**
 * Waits until the count moves (the agent, started again, is at work) or
 * is `done`, then a short random delay; resolves to the count then.
 */
async function afterProgress(
  count: () => Promise<number>,
  options: { moved: (count: number) => boolean; random: () => number; description: string },
): Promise<number> {
  await waitFor(async () => options.moved(await count()), {
    description: options.description,
    timeoutMs: 60_000,
    intervalMs: 50,
  });
  await delay(between(options.random, ...GAP_MS));
  return await count();
}

/** What one kill did, for the report. */
interface Kill {
  frozen: boolean;
  /** Claims bound, or PVs left, at the kill. */
  progress: number;
  /** Directories without a PV and PVs without a directory, seen while the agent was down. */
  orphans: number;
}

/**
 * SIGKILL with, half of the time, the driver frozen for a moment first and
 * thawed while the agent is down; then, the agent still down, counts what
 * the restarted agent must put right (directories without a PV, PVs
 * without a directory) and runs `whileDown`.
 */
async function killOnce(
  cluster: RunningCluster,
  agent: ChaosAgent,
  options: { random: () => number; progress: number; whileDown?: () => Promise<void> },
): Promise<Kill> {
  const node: ClusterNode = agent.node;
  const frozen = options.random() < 0.5;
  if (frozen) {
    node.freezeDriver();
    await delay(between(options.random, ...FROZEN_MS));
  }
  let orphans = 0;
  await agent.kill(async () => {
    if (frozen) {
      node.thawDriver();
      await delay(THAWED_MS);
    }
    const counted = await ledger(cluster, [NAMESPACE]);
    orphans = counted.leaks.length + counted.lost.length;
    await options.whileDown?.();
  });
  return { frozen, progress: options.progress, orphans };
}

/** Unbound claims of the burst, `count` of them picked by the generator. */
async function pickUnbound(
  cluster: RunningCluster,
  random: () => number,
  count: number,
): Promise<string[]> {
  const unbound = (await claimsIn(cluster.admin, NAMESPACE))
    .filter((claim) => claim.status?.phase !== "Bound" && !claim.metadata?.deletionTimestamp)
    .map((claim) => claim.metadata!.name!);
  const picked: string[] = [];
  while (picked.length < count && unbound.length > 0) {
    picked.push(unbound.splice(Math.floor(random() * unbound.length), 1)[0]!);
  }
  return picked;
}

/** Kills during the provisioning burst, deleting an unbound claim or two while the agent is down. */
async function provisionUnderKills(
  cluster: RunningCluster,
  agent: ChaosAgent,
  random: () => number,
): Promise<{ kills: Kill[]; deleted: string[] }> {
  await createBurst(cluster, {
    namespace: NAMESPACE,
    count: CLAIMS,
    nodes: [agent.node.name],
    storageClass: DEMOCRATIC_STORAGE_CLASS,
  });
  const kills: Kill[] = [];
  const deleted: string[] = [];
  let bound = 0;
  for (let kill = 0; kill < KILLS; kill++) {
    const before = bound;
    bound = await afterProgress(() => boundIn(cluster.admin, NAMESPACE), {
      moved: (now) => now > before || now === CLAIMS - deleted.length,
      random,
      description: "a claim bound since the last kill",
    });
    if (bound === CLAIMS - deleted.length) break;
    kills.push(
      await killOnce(cluster, agent, {
        random,
        progress: bound,
        whileDown: async () => {
          const picked = await pickUnbound(cluster, random, 1 + Math.floor(random() * 2));
          for (const name of picked) await deleteClaim(cluster, { namespace: NAMESPACE, name });
          deleted.push(...picked);
        },
      }),
    );
  }
  await waitClaimsBound(cluster.admin, NAMESPACE, {
    count: CLAIMS - deleted.length,
    timeoutMs: 120_000,
  });
  return { kills, deleted };
}

/** Deletes every claim at once and kills the agent until their PVs are gone. */
async function deleteUnderKills(
  cluster: RunningCluster,
  agent: ChaosAgent,
  random: () => number,
): Promise<{ kills: Kill[]; pvNames: Set<string> }> {
  const claims = await claimsIn(cluster.admin, NAMESPACE);
  const pvNames = new Set(claims.map((claim) => claim.spec!.volumeName!));
  await Promise.all(claims.map((claim) =>
    cluster.admin.core.deleteNamespacedPersistentVolumeClaim({
      namespace: NAMESPACE,
      name: claim.metadata!.name!,
    })
  ));
  const remaining = async () =>
    (await cluster.admin.core.listPersistentVolume()).items
      .filter((pv) => pvNames.has(pv.metadata!.name!)).length;
  const kills: Kill[] = [];
  let left = pvNames.size;
  for (let kill = 0; kill < KILLS; kill++) {
    const before = left;
    left = await afterProgress(remaining, {
      moved: (now) => now < before,
      random,
      description: "a PV deleted since the last kill",
    });
    if (left === 0) break;
    kills.push(await killOnce(cluster, agent, { random, progress: left }));
  }
  await waitFor(async () => (await remaining()) === 0, {
    description: `the ${pvNames.size} released PVs deleted`,
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  return { kills, pvNames };
}

/** E.g. `12*+2`: at 12, the driver frozen, two orphans while the agent was down. */
function killLine(kills: Kill[]): string {
  return kills.map((kill) =>
    `${kill.progress}${kill.frozen ? "*" : ""}${kill.orphans > 0 ? `+${kill.orphans}` : ""}`
  ).join("/");
}

Deno.test("chaos on democratic-csi: the agent SIGKILLed at random moments while claims are provisioned, then deleted", async (t) => {
  const seed = chaosSeed();
  const random = seededRandom(seed);
  console.log(`CHAOS democratic seed ${seed}`);
  await using cluster = await startChaosCluster({ driver: "democratic", auditLog: true });
  await createNamespace(cluster.admin, NAMESPACE);
  const agent = new ChaosAgent(cluster.node("node-a"));
  try {
    let deletedEarly: string[] = [];
    await t.step(`${CLAIMS} claims provisioned, the agent killed ${KILLS} times`, async () => {
      const started = performance.now();
      const { kills, deleted } = await provisionUnderKills(cluster, agent, random);
      deletedEarly = deleted;
      const counted = await settledLedger(cluster, [NAMESPACE]);
      const pvs = (await claimsIn(cluster.admin, NAMESPACE)).map((c) => c.spec!.volumeName!);
      const audit = pvAudit(await readAuditEvents(cluster.auditLogPath!), pvs, { deleted: false });
      report(
        "democratic provision",
        {
          claims: CLAIMS,
          kills: kills.length,
          "bound at kills (* driver frozen, +orphans while down)": killLine(kills),
          "unbound claims deleted while the agent was down": deleted.length,
          "exits on their own": agent.selfExits,
        },
        counted,
        {
          "PVs not created once": audit.notCreatedOnce.length,
          seconds: Math.round((performance.now() - started) / 100) / 10,
        },
      );
      assert.equal(kills.length, KILLS, `${KILLS} kills before the burst was over`);
      assert.ok(kills.some((kill) => kill.orphans > 0), "a kill left a directory without a PV");
      assertClean(counted, { bound: CLAIMS - deleted.length });
      assert.equal(counted.volumes, counted.pvs, "one directory per PV");
      assert.deepEqual(audit.notCreatedOnce, [], "PVs created again (or never by the agent)");
    });

    await t.step("every claim deleted at once, the agent killed again", async () => {
      const started = performance.now();
      const { kills, pvNames } = await deleteUnderKills(cluster, agent, random);
      const audit = pvAudit(await readAuditEvents(cluster.auditLogPath!), pvNames, {
        deleted: true,
        endings: agent.endings,
      });
      const counted = await settledLedger(cluster, [NAMESPACE], { expectVolumes: 0, expectPvs: 0 });
      report(
        "democratic delete",
        {
          claims: pvNames.size,
          kills: kills.length,
          "PVs left at kills (* driver frozen, +orphans while down)": killLine(kills),
          "exits on their own": agent.selfExits,
        },
        counted,
        {
          "PVs deleted by someone else": audit.notDeleted.length,
          "PVs not created once": audit.notCreatedOnce.length,
          "PVs with two successful DELETEs": audit.deletedTwice.length,
          "claims deleted during the burst": deletedEarly.length,
          seconds: Math.round((performance.now() - started) / 100) / 10,
        },
      );
      assert.ok(kills.length > 0, "a kill before every PV was deleted");
      assert.ok(kills.some((kill) => kill.orphans > 0), "a kill left a PV without its directory");
      assert.deepEqual(audit.notDeleted, [], "PVs without a DELETE by the agent");
      assert.deepEqual(audit.notCreatedOnce, [], "PVs created again (or never by the agent)");
      assert.deepEqual(
        audit.deletedTwiceWithoutEnding,
        [],
        "PVs deleted twice with no kill between",
      );
      assertClean(counted, { bound: 0 });
    });
  } finally {
    await agent.stop();
  }
});
