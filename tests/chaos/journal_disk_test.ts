/**
 * Chaos: the agent's intent journal on a disk that stops taking writes, as an
 * operator's node meets it. The journal is on a 64 KiB tmpfs of its own
 * (which the agent warns about: a reboot would wipe it).
 *
 * Full mid-burst, with kills and claims deleted meanwhile: claims get a
 * Warning naming the journal and ENOSPC, /readyz says why, and the driver is
 * asked for no volume whose intent is not on disk; once freed, every claim
 * is Bound and nothing leaked.
 *
 * Read-only at a start and a restart (`remount,ro` is refused while the
 * agent holds its journal open for writing, so it is remounted while the
 * agent is down): the agent does not exit, deletion goes on, no volume is
 * created; after `remount,rw` with the agent running, provisioning resumes
 * by itself. And read-only under the running agent, as the kernel turns an
 * ext4 mounted errors=remount-ro after a disk error: the same, until the
 * file system is checked and mounted again.
 */
import assert from "node:assert/strict";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { boundIn, claimsIn, createNamespace, waitClaimsBound } from "../cluster/workloads.ts";
import { allowedNames, createVolumeNames, JournalDisk } from "./journal_disk.ts";
import {
  assertClean,
  between,
  ChaosAgent,
  chaosSeed,
  createBurst,
  deleteClaim,
  type Ledger,
  report,
  seededRandom,
  settledLedger,
  startChaosAgents,
} from "./support.ts";

const CLAIMS = 12;

async function readyz(url: string): Promise<string> {
  const response = await fetch(`${url}/readyz`);
  return `${response.status} ${await response.text()}`;
}

/** Until /readyz is 503 and its journal line says `what`. */
async function waitNotReady(url: string, what: string): Promise<string> {
  return await waitFor(async () => {
    const body = await readyz(url).catch(() => "");
    return body.startsWith("503") && body.includes(what) ? body : undefined;
  }, { description: `/readyz to say ${what}`, timeoutMs: 30_000, intervalMs: 200 });
}

/** Until a claim of the namespace has a ProvisioningFailed Warning naming the journal and `errno`. */
async function waitForWarning(
  cluster: RunningCluster,
  namespace: string,
  errno: string,
  journal: string,
): Promise<string> {
  return await waitFor(async () => {
    const events = await cluster.admin.core.listNamespacedEvent({ namespace });
    return events.items.find((event) =>
      event.type === "Warning" && event.reason === "ProvisioningFailed" &&
      event.message?.includes(journal) && event.message.includes(errno)
    )?.message;
  }, { description: `a claim's Warning naming ${journal} and ${errno}`, timeoutMs: 30_000 });
}

async function pendingNames(cluster: RunningCluster, namespace: string): Promise<string[]> {
  return (await claimsIn(cluster.admin, namespace)).filter((claim) =>
    claim.status?.phase !== "Bound"
  )
    .map((claim) => claim.metadata?.name ?? "");
}

async function volumeCount(cluster: RunningCluster): Promise<number> {
  return (await cluster.node("node-a").volumes()).length;
}

/**
 * The scenario's CHAOS line, then what every read-only scenario must show:
 * /readyz named the journal it could not write, and no CreateVolume went
 * out with its intent not on disk.
 */
function reportReadOnly(
  scenario: string,
  injected: Record<string, number>,
  seen: { counted: Ledger; sentWithoutIntent: string[]; readyz: string; journal: string },
): void {
  const { counted, sentWithoutIntent, readyz, journal } = seen;
  report(scenario, injected, counted, {
    "CreateVolume without intent on disk": sentWithoutIntent.length,
  });
  assert.ok(readyz.includes(`cannot write the intent journal ${journal}`), readyz);
  assert.deepEqual(sentWithoutIntent, [], "CreateVolume sent with its intent not on disk");
}

/** node-a with our agent, its journal on `disk`, and what each scenario uses of them. */
async function startOnDisk(disk: JournalDisk) {
  const { cluster, urls } = await startChaosAgents({
    capacity: "100Gi",
    agentArgs: [`--journal-path=${disk.journal}`],
  });
  const node = cluster.node("node-a");
  const agent = new ChaosAgent(node);
  return {
    cluster,
    url: urls.get("node-a")!,
    node,
    agent,
    storageClass: cluster.storageClassName("fast"),
  };
}

Deno.test("chaos: the journal's disk full mid-burst, then read-only, with kills", async (t) => {
  const seed = chaosSeed();
  const random = seededRandom(seed);
  console.log(`CHAOS journal-disk seed ${seed}`);
  await using disk = await JournalDisk.mount("64k");
  const started = await startOnDisk(disk);
  await using cluster = started.cluster;
  const { url, node, agent, storageClass } = started;
  const namespaces: string[] = [];
  let expectBound = 0;
  try {
    await t.step(
      "full mid-burst: no volume without its intent on disk; freed: all Bound",
      async () => {
        const namespace = "journal-full";
        namespaces.push(namespace);
        await createNamespace(cluster.admin, namespace);
        await node.control.setFault({ method: "CreateVolume", latencyMs: 500, latencyMaxMs: 1000 });
        await createBurst(cluster, { namespace, count: CLAIMS, nodes: ["node-a"], storageClass });
        await waitClaimsBound(cluster.admin, namespace, { count: 3, timeoutMs: 60_000 });
        const before = await createVolumeNames(node);
        disk.fill();
        const full = new AbortController();
        const keepingFull = disk.keepFull(full.signal);
        const boundAtFill = await boundIn(cluster.admin, namespace);
        const body = await waitNotReady(url, "ENOSPC");
        assert.ok(body.includes(`journal: cannot write the intent journal ${disk.journal}`), body);
        const pending = await pendingNames(cluster, namespace);
        assert.ok(pending.length >= 3, `claims still pending when the disk filled: ${pending}`);
        const warned = await waitForWarning(cluster, namespace, "ENOSPC", disk.journal);
        for (let kill = 0; kill < 2; kill++) {
          await delay(between(random, 1500, 3000));
          await agent.kill();
        }
        const deleted = pending.slice(0, 2);
        for (const name of deleted) await deleteClaim(cluster, { namespace, name });
        await waitNotReady(url, "ENOSPC");
        await delay(3000);
        // The calls first: each one's intent, if it was written, is on disk by then.
        const calls = await createVolumeNames(node);
        const allowed = allowedNames(disk, before);
        const sentWithoutIntent = calls.filter((name) => !allowed.has(name));
        full.abort();
        await keepingFull;
        disk.free();
        await node.control.clearFaults();
        expectBound += CLAIMS - deleted.length;
        await waitClaimsBound(cluster.admin, namespace, {
          count: CLAIMS - deleted.length,
          timeoutMs: 120_000,
        });
        const counted = await settledLedger(cluster, namespaces);
        report(
          "journal-disk full",
          {
            claims: CLAIMS,
            "bound at fill": boundAtFill,
            kills: agent.kills,
            "claims deleted while full": deleted.length,
            "CreateVolume calls": (await createVolumeNames(node)).length,
          },
          counted,
          { "CreateVolume without intent on disk": sentWithoutIntent.length },
        );
        assert.deepEqual(sentWithoutIntent, [], "CreateVolume sent with its intent not on disk");
        assert.ok(warned.includes("its intent could not be written to the journal"), warned);
        assertClean(counted, { bound: expectBound });
        assert.equal(agent.selfExits, 0, "the agent never exited over its journal");
      },
    );

    await t.step(
      "read-only at a start and a restart: deletion goes on, nothing created; rw while running: resumes",
      async () => {
        const namespace = "journal-ro";
        namespaces.push(namespace);
        await createNamespace(cluster.admin, namespace);
        await createBurst(cluster, { namespace, count: 4, nodes: ["node-a"], storageClass });
        await waitClaimsBound(cluster.admin, namespace, { count: 4, timeoutMs: 60_000 });
        const before = await createVolumeNames(node);
        // Remounted while the agent is down: a read-only remount is refused while a process
        // holds a file open for writing, as the agent holds its journal.
        await agent.kill(() => disk.readOnly(true));
        await waitNotReady(url, "EROFS");
        await createBurst(cluster, {
          namespace,
          count: 4,
          nodes: ["node-a"],
          storageClass,
          prefix: "ro-new",
        });
        const volumesAtRo = await volumeCount(cluster);
        for (const name of ["c-0", "c-1"]) await deleteClaim(cluster, { namespace, name });
        await waitFor(async () => (await volumeCount(cluster)) === volumesAtRo - 2, {
          description: "two volumes deleted while the journal is read-only",
          timeoutMs: 60_000,
          intervalMs: 250,
        });
        await waitNotReady(url, "EROFS");
        await waitForWarning(cluster, namespace, "EROFS", disk.journal);
        await agent.kill();
        const body = await waitNotReady(url, "EROFS");
        await deleteClaim(cluster, { namespace, name: "c-2" });
        await waitFor(async () => (await volumeCount(cluster)) === volumesAtRo - 3, {
          description: "a volume deleted by the agent restarted on a read-only journal",
          timeoutMs: 60_000,
          intervalMs: 250,
        });
        // The calls first: each one's intent, if it was written, is on disk by then.
        const calls = await createVolumeNames(node);
        const allowed = allowedNames(disk, before);
        const sentWithoutIntent = calls.filter((name) => !allowed.has(name));
        assert.equal(
          await boundIn(cluster.admin, namespace),
          1,
          "no new claim Bound while read-only",
        );
        await disk.readOnly(false);
        expectBound += 5;
        await waitClaimsBound(cluster.admin, namespace, { count: 5, timeoutMs: 60_000 });
        const counted = await settledLedger(cluster, namespaces);
        reportReadOnly(
          "journal-disk read-only",
          {
            "claims bound before": 4,
            "claims created while read-only": 4,
            "claims deleted while read-only": 3,
            "starts on a read-only journal": 2,
          },
          { counted, sentWithoutIntent, readyz: body, journal: disk.journal },
        );
        assertClean(counted, { bound: expectBound });
        assert.equal(agent.selfExits, 0, "the agent never exited over its journal");
      },
    );
  } finally {
    await disk.readOnly(false).catch(() => undefined);
    await agent.stop();
  }
});

Deno.test("chaos: the journal's disk turns read-only under the running agent (ext4's emergency read-only)", async () => {
  await using disk = await JournalDisk.mountExt4(16);
  const started = await startOnDisk(disk);
  await using cluster = started.cluster;
  const { url, node, agent, storageClass } = started;
  const namespace = "journal-emergency-ro";
  try {
    await createNamespace(cluster.admin, namespace);
    await createBurst(cluster, { namespace, count: 4, nodes: ["node-a"], storageClass });
    await waitClaimsBound(cluster.admin, namespace, { count: 4, timeoutMs: 60_000 });
    const before = await createVolumeNames(node);
    await disk.emergencyReadOnly();
    await createBurst(cluster, {
      namespace,
      count: 4,
      nodes: ["node-a"],
      storageClass,
      prefix: "ro-new",
    });
    const body = await waitNotReady(url, "EROFS");
    await waitForWarning(cluster, namespace, "EROFS", disk.journal);
    const volumesAtRo = await volumeCount(cluster);
    await deleteClaim(cluster, { namespace, name: "c-0" });
    await waitFor(async () => (await volumeCount(cluster)) === volumesAtRo - 1, {
      description: "a volume deleted while the journal is read-only",
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    await delay(3000);
    const calls = await createVolumeNames(node);
    const allowed = allowedNames(disk, before);
    const sentWithoutIntent = calls.filter((name) => !allowed.has(name));
    const boundWhileRo = await boundIn(cluster.admin, namespace);
    const exitsWhileRo = agent.selfExits;
    // The way back from an emergency read-only: stop, check the file system, mount it again.
    await agent.kill(() => disk.repair());
    await waitClaimsBound(cluster.admin, namespace, { count: 7, timeoutMs: 60_000 });
    const counted = await settledLedger(cluster, [namespace]);
    reportReadOnly(
      "journal-disk emergency read-only",
      {
        "claims bound before": 4,
        "claims created while read-only": 4,
        "claims deleted while read-only": 1,
        "restarts after the repair": 1,
      },
      { counted, sentWithoutIntent, readyz: body, journal: disk.journal },
    );
    assert.equal(exitsWhileRo, 0, "the agent never exited over its journal");
    assert.equal(boundWhileRo, 3, "no new claim Bound while read-only");
    assertClean(counted, { bound: 7 });
  } finally {
    await agent.stop();
  }
});
