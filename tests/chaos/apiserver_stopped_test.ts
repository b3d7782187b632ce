/**
 * Chaos: kube-apiserver stopped (SIGTERM: the agents' connections close, then
 * are refused) in the middle of a burst of claims, kept away well past the
 * readiness window, and started again on the same port with the same
 * certificate; the rest of the burst arrives with it. The agents never exit,
 * /healthz stays 200 throughout (the agent itself is fine), /readyz fails
 * naming the informers that cannot list or watch and recovers by itself,
 * log lines mark both transitions, and every claim has its PV within 60 s of
 * the API server's return and is then Bound with exactly one PV (Bound also
 * waits for kube-controller-manager's own backoff: control_plane.ts).
 *
 * --readiness-window=5s (default 30 s) lets a 15 s outage show in /readyz.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { boundIn, createNamespace } from "../cluster/workloads.ts";
import { startOurAgents } from "../integration/support.ts";
import {
  assertAgentsRunning,
  BOUND_AFTER_RETURN_MS,
  claimNames,
  createClaims,
  finishBurst,
  informerRestarts,
  probe,
  report,
  sampleProbes,
  seconds,
} from "./control_plane.ts";

const NAMESPACE = "apiserver-stopped";
const CLAIMS = 40;
const OUTAGE_MS = 15_000;
const READINESS_WINDOW = "5s";

Deno.test("kube-apiserver stopped mid-burst and started again: agents stay alive, readiness fails and recovers, every claim provisioned within 60 s and Bound", async () => {
  await using cluster = await startCluster({ nodes: 2 });
  try {
    const urls = await startOurAgents(cluster, {
      args: [`--readiness-window=${READINESS_WINDOW}`, "-v=2"],
    });
    await createNamespace(cluster.admin, NAMESPACE);
    const names = claimNames("burst", CLAIMS);
    const [first, second] = [names.slice(0, CLAIMS / 2), names.slice(CLAIMS / 2)];
    await createClaims(cluster, { namespace: NAMESPACE, names: first });
    const boundAtStop = await boundIn(cluster.admin, NAMESPACE);
    const restartsBefore = await informerRestarts(urls.values());

    await cluster.apiserver.stop();
    const stoppedAt = performance.now();
    const liveness: number[] = [];
    const notReady = new Map<string, string>();
    await waitFor(async () => {
      for (const [node, url] of urls) {
        liveness.push((await probe(url, "/healthz")).status);
        const ready = await probe(url, "/readyz");
        if (ready.status === 503 && /informers: .*cannot list or watch/.test(ready.body)) {
          notReady.set(node, ready.body);
        }
      }
      return notReady.size === urls.size;
    }, { description: "/readyz of every agent failing on its informers", timeoutMs: OUTAGE_MS });
    const notReadyAfterMs = performance.now() - stoppedAt;
    liveness.push(...(await sampleProbes(urls.values(), stoppedAt + OUTAGE_MS)).healthz);
    assert.deepEqual([...new Set(liveness)], [200], "/healthz while the API server is away");
    assertAgentsRunning(cluster);

    await cluster.apiserver.start();
    const outageMs = performance.now() - stoppedAt;
    const returnedAt = performance.now();
    // Each agent's way back to ready, watched while the burst completes.
    const readyAgain = Promise.all(
      [...urls.values()].map((url) =>
        waitFor(async () => (await probe(url, "/readyz")).status === 200 && performance.now(), {
          description: `${url}/readyz 200 again`,
          timeoutMs: BOUND_AFTER_RETURN_MS,
          intervalMs: 250,
        })
      ),
    );
    const burst = await finishBurst(cluster, {
      namespace: NAMESPACE,
      rest: second,
      all: names,
      returnedAt: returnedAt,
    });
    const readyAgainMs = Math.max(...await readyAgain) - returnedAt;
    assertAgentsRunning(cluster);
    for (const node of cluster.nodes) {
      const log = await Deno.readTextFile(node.agent!.logFile);
      assert.match(log, /"Readiness condition failed".*informers/, `${node.name}: the failure`);
      assert.match(log, /"Readiness condition met".*informers/, `${node.name}: the recovery`);
    }
    const restarts = await informerRestarts(urls.values());
    const errors = (restarts.error ?? 0) - (restartsBefore.error ?? 0);
    assert.ok(errors >= urls.size, `informer restarts for errors: ${errors}`);
    report(
      `kube-apiserver stopped for ${
        seconds(outageMs)
      } s after ${first.length} of ${CLAIMS} claims ` +
        `(${boundAtStop} Bound at the stop); the other ${second.length} created on its return`,
      {
        agents: urls.size,
        notReadyAfterS: seconds(notReadyAfterMs),
        healthzAnswers: liveness.length,
        healthzNon200: liveness.filter((status) => status !== 200).length,
        allProvisionedAfterReturnS: seconds(burst.provisionedMs),
        allBoundAfterReturnS: seconds(burst.boundMs),
        readyAgainAfterReturnS: seconds(readyAgainMs),
        informerRestarts: restarts,
        exampleNotReady: [...notReady.values()][0],
      },
    );
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  }
});
