/**
 * Chaos: 410 Gone on every watch, several times. kube-apiserver runs with
 * --watch-cache=false, so its watches read etcd directly. Each round, etcd's
 * history is compacted to its current revision and every watch of the agents
 * is cut at the proxy (a network blip): each agent resumes each watch from
 * its last resourceVersion, which etcd no longer has, and is answered 410
 * Gone. Claims are created before each compaction and right after each cut
 * (only a relist can show those). No stall: every informer relists and
 * watches again; no missed claim: every claim is Bound with exactly one PV;
 * the agents never exit and are ready at the end.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { isWatch } from "../cluster/stall_proxy.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { createNamespace, waitClaimsBound } from "../cluster/workloads.ts";
import { startOurAgents } from "../integration/support.ts";
import { MIN_HEALTHY_STREAM_MS } from "../../lib/kube/informer/health.ts";
import {
  assertAgentsRunning,
  assertOnePvEach,
  BOUND_AFTER_RETURN_MS,
  claimNames,
  compactEtcd,
  createClaims,
  informerLogs,
  informerRestarts,
  informersUp,
  probe,
  report,
  seconds,
} from "./control_plane.ts";

const NAMESPACE = "watch-gone";
const ROUNDS = 3;
const CLAIMS_PER_STEP = 6;

Deno.test("410 Gone on every watch after etcd compaction, three times: no stall, no missed claim", async () => {
  await using cluster = await startCluster({ nodes: 2, apiServerArgs: ["--watch-cache=false"] });
  const proxy = await cluster.startApiProxy();
  try {
    const urls = await startOurAgents(cluster, { apiServer: proxy.url, args: ["-v=2"] });
    await createNamespace(cluster.admin, NAMESPACE);
    const names: string[] = [];
    const rounds: Record<string, number>[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const before = claimNames(`r${round}-before`, CLAIMS_PER_STEP);
      await createClaims(cluster, { namespace: NAMESPACE, names: before });
      names.push(...before);
      // Once everything is Bound, nothing the agents watch changes until the cut.
      await waitClaimsBound(cluster.admin, NAMESPACE, {
        count: names.length,
        timeoutMs: BOUND_AFTER_RETURN_MS,
      });
      await assertOnePvEach(cluster, NAMESPACE, names);
      const watching = await waitFor(async () => {
        const counts = await informersUp(urls.values());
        return counts.up === counts.all && counts.all > 0 && counts;
      }, { description: "every informer watching", timeoutMs: 30_000 });
      // Each blip hits watches that lasted (rapid blips in a row escalate the
      // backoff on purpose: lib/kube/informer/informer.ts).
      await delay(MIN_HEALTHY_STREAM_MS + 1000);
      // Two writes no agent watches: every agent's resourceVersion is then
      // older than the compacted revision (equal to it would resume fine).
      for (const suffix of ["a", "b"]) {
        await cluster.admin.core.createNamespacedConfigMap({
          namespace: NAMESPACE,
          body: { metadata: { name: `bump-${round}-${suffix}` } },
        });
      }
      const expiredBefore = (await informerRestarts(urls.values())).expired ?? 0;
      const revision = await compactEtcd(cluster);
      const cutAt = performance.now();
      const cut = proxy.cut(isWatch);
      const after = claimNames(`r${round}-after`, CLAIMS_PER_STEP);
      await createClaims(cluster, { namespace: NAMESPACE, names: after });
      names.push(...after);
      const expired = await waitFor(async () => {
        const now = (await informerRestarts(urls.values())).expired ?? 0;
        return now - expiredBefore >= watching.all && now - expiredBefore;
      }, { description: `410 Gone on each of the ${watching.all} watches`, timeoutMs: 30_000 });
      await waitFor(async () => {
        const counts = await informersUp(urls.values());
        return counts.up === counts.all;
      }, { description: "every informer watching again", timeoutMs: 30_000 });
      rounds.push({
        round,
        compactedAt: revision,
        watchesCut: cut,
        expired,
        watchingAgainAfterS: seconds(performance.now() - cutAt),
      });
    }
    const waitedMs = await waitClaimsBound(cluster.admin, NAMESPACE, {
      count: names.length,
      timeoutMs: BOUND_AFTER_RETURN_MS,
    });
    await assertOnePvEach(cluster, NAMESPACE, names);
    for (const url of urls.values()) {
      await waitFor(async () => (await probe(url, "/readyz")).status === 200, {
        description: `${url}/readyz`,
      });
    }
    assertAgentsRunning(cluster);
    const restarts = await informerRestarts(urls.values());
    assert.ok((restarts.expired ?? 0) >= ROUNDS * rounds[0]!.expired!, JSON.stringify(restarts));
    for (const node of cluster.nodes) {
      const log = await Deno.readTextFile(node.agent!.logFile);
      assert.match(log, /"Watch expired \(410 Gone\), relisting"/, node.name);
    }
    report(
      `${ROUNDS} rounds of: etcd compacted to its current revision, every agent watch cut at ` +
        `the proxy; ${CLAIMS_PER_STEP} claims before each compaction and after each cut`,
      { claims: names.length, rounds, allBoundS: seconds(waitedMs), informerRestarts: restarts },
    );
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    console.error(await informerLogs(cluster));
    throw error;
  }
});
