/**
 * Chaos: kube-apiserver's priority and fairness turns the agent's requests
 * away (429 with Retry-After) while a burst of claims is provisioned, as it
 * does to a fleet that floods it. A FlowSchema matching the agent's
 * ServiceAccount sends it to a priority level of the fewest seats
 * kube-apiserver allows (one: a level of no nominal shares still gets one)
 * that rejects what does not fit, and the test keeps that seat busy with
 * one large read after another (GET /openapi/v2 as the agent): most
 * requests the agent sends meanwhile are refused. The agent follows Retry-After as
 * client-go does: nothing it writes is lost or given up on. Every claim is
 * Bound with exactly one PV, each has its ProvisioningSucceeded Event and no
 * Warning, and the agent never logged that saving a PV failed (before it
 * followed Retry-After, a refused PV POST went to the PV saver's background
 * retries).
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { createNamespace, waitClaimsBound } from "../cluster/workloads.ts";
import { agentEvents, startOurAgents, waitForClaimEvent } from "../integration/support.ts";
import {
  assertAgentsRunning,
  assertOnePvEach,
  BOUND_AFTER_RETURN_MS,
  claimNames,
  createClaims,
  report,
  seconds,
  waitAllProvisioned,
} from "./control_plane.ts";
import { getAs, NAME, occupySeat, throttleAgent } from "./throttle.ts";

const NAMESPACE = "apiserver-throttled";
const CLAIMS = 20;

/** Requests kube-apiserver rejected for the flow schema, from its own /metrics. */
async function rejectedFor(cluster: RunningCluster, schema: string): Promise<number> {
  const metrics = await getAs(cluster, cluster.kubeconfigPath, "/metrics");
  let total = 0;
  for (const line of metrics.body.split("\n")) {
    if (!line.startsWith("apiserver_flowcontrol_rejected_requests_total{")) continue;
    if (line.includes(`flow_schema="${schema}"`)) total += Number(line.split(" ").at(-1));
  }
  return total;
}

Deno.test("kube-apiserver refuses the agent's concurrent requests with 429 during a burst: it follows Retry-After, loses no Event, gives no PV to background retries", async () => {
  await using cluster = await startCluster({ nodes: 1 });
  try {
    await startOurAgents(cluster);
    const node = cluster.nodes[0]!;
    await createNamespace(cluster.admin, NAMESPACE);
    const throttled = await throttleAgent(cluster, node.name);
    const agentKubeconfig = throttled.kubeconfigPath;
    const rejectedBefore = await rejectedFor(cluster, NAME);
    const throttledAt = performance.now();
    const busy = new AbortController();
    const occupied = occupySeat(cluster, { kubeconfigPath: agentKubeconfig, signal: busy.signal });
    const names = claimNames("throttled", CLAIMS);
    try {
      await createClaims(cluster, { namespace: NAMESPACE, names });
      await waitAllProvisioned(cluster, { namespace: NAMESPACE, names });
    } finally {
      busy.abort();
    }
    const seat = await occupied;
    const rejected = (await rejectedFor(cluster, NAME)) - rejectedBefore - seat.refused;
    await throttled.lift();
    const provisionedMs = performance.now() - throttledAt;
    assert.ok(rejected > 0, "kube-apiserver rejected none of the agent's requests");

    await waitClaimsBound(cluster.admin, NAMESPACE, {
      count: names.length,
      timeoutMs: BOUND_AFTER_RETURN_MS,
    });
    await assertOnePvEach(cluster, NAMESPACE, names);
    assertAgentsRunning(cluster);
    for (const name of names) {
      // Events are written after the PV, through the same refusals: they may come later.
      await waitForClaimEvent(cluster, { namespace: NAMESPACE, name }, {
        reason: "ProvisioningSucceeded",
        timeoutMs: 60_000,
      });
      const events = await agentEvents(cluster, { namespace: NAMESPACE, name });
      const reasons = events.map((event) => `${event.type} ${event.reason}`);
      assert.ok(!reasons.some((reason) => reason.startsWith("Warning")), `${name}: ${reasons}`);
    }
    const log = await Deno.readTextFile(node.agent!.logFile);
    assert.ok(!log.includes("Saving the PV failed"), "a PV save was given to background retries");
    assert.ok(!log.includes("Could not write event"), "an Event was dropped");
    report(
      `kube-apiserver gave the agent one seat and refused the rest while ${CLAIMS} claims were ` +
        "provisioned",
      { rejected, seatReads: seat.reads, allProvisionedS: seconds(provisionedMs) },
    );
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  }
});
