/**
 * Chaos: an administrator switches a Released PV to Retain while the agent's
 * PV watches are stalled (tests/cluster/stall_proxy.ts between the agent and
 * kube-apiserver, as behind a frozen NAT): the agent's cache still says
 * Delete, the API server says Retain, and the volume must stay.
 *
 * How the cache is made stale at the moment of deletion, for real: the
 * agent sees the PV become Released while its watches work, and its first
 * DeleteVolume fails (the test driver refuses DeleteVolume for a while), so
 * the delete worker retries from the cache a second or two later. Between
 * two retries the PV watches' connections are frozen at the proxy (open,
 * nothing forwarded to the agent), the reclaim policy is patched to Retain,
 * and the driver accepts DeleteVolume again. The next retry decides from a
 * cache that still says Delete; only the PV read from the API server right
 * before DeleteVolume can tell. Then the stall is released, the held watch
 * events arrive, and the agent drops its finalizer from the Retain PV.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { isWatch } from "../cluster/stall_proxy.ts";
import type { RequestHead } from "../cluster/request_heads.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import { mergePatch, startOurAgents } from "../integration/support.ts";
import {
  CHAOS_AGENT_ARGS,
  createClaim,
  deleteClaim,
  report,
  settledLedger,
  volumeNames,
} from "./support.ts";
import { PV_PROTECTION_FINALIZER } from "../../lib/model/keys.ts";

const NAMESPACE = "released-retained";
/** The agent's PV watches: this node's labelled PVs and the unlabelled ones. */
const PV_WATCHES = 2;
const SKIPPED = '"Volume no longer needs deletion, skipping"';

function isPvWatch(request: RequestHead): boolean {
  return isWatch(request) && request.path.startsWith("/api/v1/persistentvolumes?");
}

Deno.test("a Released PV switched to Retain while the agent's PV watches are stalled keeps its volume", async () => {
  await using cluster = await startCluster({
    nodes: ["node-a"],
    driver: "test",
    driverOptions: { capacity: { fast: "1Gi" } },
    storageCapacity: false,
  });
  const proxy = await cluster.startApiProxy();
  try {
    await startOurAgents(cluster, { apiServer: proxy.url, args: [...CHAOS_AGENT_ARGS] });
    const node = cluster.node("node-a");
    await createNamespace(cluster.admin, NAMESPACE);
    const ref = { namespace: NAMESPACE, name: "kept" };
    await createClaim(cluster, {
      ...ref,
      node: "node-a",
      storageClass: cluster.storageClassName("fast"),
    });
    const claim = await waitForClaimBound(cluster.admin, ref);
    const pvName = claim.spec!.volumeName!;

    await node.control.setFault({ method: "DeleteVolume", code: "INTERNAL", message: "busy" });
    await deleteClaim(cluster, ref);
    await waitFor(async () => (await node.calls("DeleteVolume")).length >= 1, {
      description: "the agent's first DeleteVolume (refused by the driver)",
      timeoutMs: 30_000,
    });

    const stall = await waitFor(() => {
      const candidate = proxy.stall({ request: isPvWatch, connections: "open" });
      if (candidate.connections.size === PV_WATCHES) return candidate;
      candidate.release();
      return undefined;
    }, { description: `the agent's ${PV_WATCHES} PV watches open`, intervalMs: 100 });
    await cluster.admin.core.patchPersistentVolume({
      name: pvName,
      body: { spec: { persistentVolumeReclaimPolicy: "Retain" } },
    }, mergePatch);
    const refusedCalls = (await node.calls("DeleteVolume")).length;
    await node.control.clearFaults("DeleteVolume");

    // The next retry comes within --retry-interval-max (2 s): it skips, or deletes on a stale cache.
    const log = () => Deno.readTextFile(node.agent!.logFile);
    await waitFor(async () => {
      const answered = (await node.calls("DeleteVolume")).some((call) => call.codeName === "OK");
      return answered || (await log()).includes(SKIPPED);
    }, { description: "the agent's next attempt at the Released PV", timeoutMs: 30_000 });
    const deletedOnStaleCache = (await node.calls("DeleteVolume"))
      .filter((call) => call.codeName === "OK").length;
    assert.equal(deletedOnStaleCache, 0, "DeleteVolume succeeded for a PV switched to Retain");
    assert.ok((await log()).includes(SKIPPED), "the skip is logged");

    stall.release();
    const pv = await waitFor(async () => {
      const read = await cluster.admin.core.readPersistentVolume({ name: pvName });
      return (read.metadata?.finalizers ?? []).includes(PV_PROTECTION_FINALIZER) ? undefined : read;
    }, { description: "the agent caught up and dropped its finalizer", timeoutMs: 60_000 });
    assert.equal(pv.spec?.persistentVolumeReclaimPolicy, "Retain");
    assert.equal(pv.status?.phase, "Released");
    assert.equal(pv.metadata?.deletionTimestamp, undefined, "the PV is being deleted");
    const counted = await settledLedger(cluster, [NAMESPACE], { expectVolumes: 1, expectPvs: 1 });
    assert.deepEqual([...await volumeNames(node)], [pvName], "the driver still holds the volume");
    assert.deepEqual(counted.duplicates, [], "duplicates");
    assert.equal(node.agent!.running, true, "the agent never exited");
    report(
      "released PV switched to Retain while its watch is stalled",
      {
        stalledPvWatches: stall.connections.size,
        refusedDeleteVolumes: refusedCalls,
      },
      counted,
      {
        deleteVolumeAfterRetain: deletedOnStaleCache,
      },
    );
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  }
});
