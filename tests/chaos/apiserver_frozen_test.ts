/**
 * Chaos: kube-apiserver frozen with SIGSTOP for 20 s in the middle of a burst
 * of claims. Its sockets stay open, so the kernel accepts the agents'
 * connections and requests and nothing answers: every call hangs (this is
 * what a stuck API server or a blackholed network looks like, unlike a stop,
 * which refuses at once). The agents never exit, /healthz stays 200 (nothing
 * in the agent is stuck: its requests have deadlines), and after the thaw
 * every claim, including those created right after it, has its PV within 60 s
 * and is Bound with exactly one PV.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { boundIn, createNamespace } from "../cluster/workloads.ts";
import { startOurAgents } from "../integration/support.ts";
import {
  assertAgentsRunning,
  claimNames,
  createClaims,
  finishBurst,
  informerRestarts,
  report,
  sampleProbes,
  seconds,
} from "./control_plane.ts";

const NAMESPACE = "apiserver-frozen";
const CLAIMS = 40;
const FROZEN_MS = 20_000;

Deno.test("kube-apiserver frozen for 20 s mid-burst: agents stay alive and live, every claim provisioned within 60 s of the thaw and Bound", async () => {
  await using cluster = await startCluster({ nodes: 2 });
  try {
    const urls = await startOurAgents(cluster, { args: ["-v=2"] });
    await createNamespace(cluster.admin, NAMESPACE);
    const names = claimNames("burst", CLAIMS);
    const [first, second] = [names.slice(0, CLAIMS / 2), names.slice(CLAIMS / 2)];
    await createClaims(cluster, { namespace: NAMESPACE, names: first });
    const boundAtFreeze = await boundIn(cluster.admin, NAMESPACE);

    cluster.apiserver.freeze();
    const frozenAt = performance.now();
    let probes;
    try {
      probes = await sampleProbes(urls.values(), frozenAt + FROZEN_MS);
    } finally {
      cluster.apiserver.thaw();
    }
    const frozenMs = performance.now() - frozenAt;
    const thawedAt = performance.now();
    assert.deepEqual([...new Set(probes.healthz)], [200], "/healthz while the API server hangs");
    assertAgentsRunning(cluster);

    const burst = await finishBurst(cluster, {
      namespace: NAMESPACE,
      rest: second,
      all: names,
      returnedAt: thawedAt,
    });
    assertAgentsRunning(cluster);
    report(
      `kube-apiserver frozen (SIGSTOP) for ${seconds(frozenMs)} s after ${first.length} of ` +
        `${CLAIMS} claims (${boundAtFreeze} Bound at the freeze); the other ${second.length} ` +
        `created after the thaw`,
      {
        agents: urls.size,
        healthzAnswers: probes.healthz.length,
        healthzNon200: probes.healthz.filter((status) => status !== 200).length,
        readyzNon200WhileFrozen: probes.readyz.filter((status) => status !== 200).length,
        allProvisionedAfterThawS: seconds(burst.provisionedMs),
        allBoundAfterThawS: seconds(burst.boundMs),
        informerRestarts: await informerRestarts(urls.values()),
      },
    );
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  }
});
