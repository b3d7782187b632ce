/**
 * Chaos: the agent restarts while kube-apiserver does not answer (a driver
 * or node restart during a control-plane outage). Its start-up calls to the
 * API server (the CSIStorageCapacity API check, the Node owner's read, the
 * VolumeAttributesClass discovery) wait with backoff instead of exiting: the
 * process stays up (no exit code is ever seen), /healthz stays 200, /readyz
 * is 503 and says what start-up waits for, and once kube-apiserver is back
 * the agent becomes ready by itself and provisions a new claim, with nothing
 * leaked, lost or made twice.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { startOurAgents, waitForReady } from "../integration/support.ts";
import {
  BOUND_AFTER_RETURN_MS,
  claimNames,
  createClaims,
  finishBurst,
  probe,
  sampleProbes,
  seconds,
} from "./control_plane.ts";
import { assertClean, CHAOS_AGENT_ARGS, report, settledLedger } from "./support.ts";

const NAMESPACE = "apiserver-away-at-start";
/** Long enough for several of the backoff's tries (1, 2, 4, 8 s). */
const OUTAGE_MS = 20_000;

Deno.test("agent restarted while kube-apiserver does not answer: it waits instead of exiting, says why in /readyz, and provisions once the API server is back", async () => {
  await using cluster = await startCluster({ nodes: ["node-a"] });
  try {
    const urls = await startOurAgents(cluster, {
      args: [
        ...CHAOS_AGENT_ARGS,
        "--feature-gates=Topology=true",
        "--enable-capacity",
        "--capacity-owner-node",
      ],
    });
    const url = urls.get("node-a")!;
    const agent = cluster.node("node-a").agent!;
    await createNamespace(cluster.admin, NAMESPACE);
    const [before, after] = [claimNames("before", 1), claimNames("after", 1)];
    await createClaims(cluster, { namespace: NAMESPACE, names: before });

    await cluster.apiserver.stop();
    const stoppedAt = performance.now();
    await agent.restart();
    const restarted = agent.process;
    const waitingBody = await waitFor(async () => {
      const ready = await probe(url, "/readyz").catch(() => undefined);
      return ready?.status === 503 && /apiserver: waiting for the API server/.test(ready.body)
        ? ready.body
        : undefined;
    }, { description: "/readyz saying start-up waits for the API server", timeoutMs: 15_000 });
    const probes = await sampleProbes([url], stoppedAt + OUTAGE_MS);
    assert.deepEqual([...new Set(probes.healthz)], [200], "/healthz while the API server is away");
    assert.deepEqual([...new Set(probes.readyz)], [503], "/readyz while the API server is away");
    assert.equal(agent.process, restarted, "the agent was not started again");
    assert.equal(restarted.running, true, `the agent exited (log ${agent.logFile})`);

    await cluster.apiserver.start();
    const returnedAt = performance.now();
    await waitForReady(url, BOUND_AFTER_RETURN_MS);
    const readyAfterMs = performance.now() - returnedAt;
    const burst = await finishBurst(cluster, {
      namespace: NAMESPACE,
      rest: after,
      all: [...before, ...after],
      returnedAt,
    });
    assert.equal(agent.process, restarted, "the agent was not started again");
    assert.equal(restarted.running, true, `the agent exited (log ${agent.logFile})`);
    const log = await Deno.readTextFile(agent.logFile);
    const retries = log.split("\n").filter((line) =>
      line.includes("The API server does not answer a start-up call")
    ).length;
    assert.ok(retries >= 2, `start-up retries logged: ${retries}`);
    const counted = await settledLedger(cluster, [NAMESPACE], { expectPvs: 2, expectVolumes: 2 });
    assertClean(counted, { bound: 2 });
    report(
      "agent restarted while kube-apiserver does not answer",
      {
        outageS: seconds(returnedAt - stoppedAt),
        agentRestarts: 1,
      },
      counted,
      {
        agentExits: 0,
        startupRetriesLogged: retries,
        readyAfterReturnS: seconds(readyAfterMs),
        provisionedAfterReturnS: seconds(burst.provisionedMs),
        notReady: JSON.stringify(
          waitingBody.split("\n").find((line) =>
            line.startsWith("apiserver")
          ),
        ),
      },
    );
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  }
});
