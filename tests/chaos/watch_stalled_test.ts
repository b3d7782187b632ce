/**
 * Chaos: the agent's watches go silent without an error, as behind a dead
 * NAT or a stuck proxy (tests/cluster/stall_proxy.ts between the agent and
 * kube-apiserver, TLS verified end to end). The connections stay open and
 * nothing more arrives, not even kube-apiserver's bookmarks. The agent must
 * notice within its idle timeout, relist, and provision the claim created
 * while it heard nothing; it never exits and stays ready.
 *
 * --watch-idle-timeout=20s instead of the default 90 s keeps the test short.
 * kube-apiserver bookmarks a quiet watch only about once a minute, so at 20 s
 * quiet healthy watches are relisted too; the assertions hold either way.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { isWatch } from "../cluster/stall_proxy.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import { scrape, selectedClaim, startOurAgents } from "../integration/support.ts";
import { informerRestarts, report, seconds } from "./control_plane.ts";

const NAMESPACE = "stalled-watch";
const IDLE_S = 20;
/**
 * The watches of an agent without capacity on a driver that does not attach:
 * PVs twice, its node's labelled ones and the unlabelled ones.
 */
const WATCHES = [
  "persistentvolumeclaims",
  "persistentvolumes (this node's labels)",
  "persistentvolumes (unlabelled)",
  "storageclasses",
];

Deno.test("a stalled watch is detected within the idle timeout and relisted; the claim created meanwhile is provisioned", async () => {
  await using cluster = await startCluster({ nodes: 1 });
  const proxy = await cluster.startApiProxy();
  const claim = (name: string) =>
    cluster.admin.core.createNamespacedPersistentVolumeClaim({
      namespace: NAMESPACE,
      body: selectedClaim(name, {
        node: "node-a",
        storageClass: cluster.storageClassName("fast"),
        driverName: cluster.driverName,
      }),
    });
  try {
    const urls = await startOurAgents(cluster, {
      apiServer: proxy.url,
      args: [`--watch-idle-timeout=${IDLE_S}s`, "-v=2"],
    });
    const url = urls.get("node-a")!;
    const agent = cluster.node("node-a").agent!;
    await createNamespace(cluster.admin, NAMESPACE);
    await claim("before");
    await waitForClaimBound(cluster.admin, { namespace: NAMESPACE, name: "before" });

    // Silence every watch open now, once all three are open.
    const stall = await waitFor(() => {
      const candidate = proxy.stall({ request: isWatch, connections: "open" });
      if (candidate.connections.size === WATCHES.length) return candidate;
      candidate.release();
      return undefined;
    }, { description: `the agent's ${WATCHES.length} watches open`, intervalMs: 200 });
    const stalledAt = performance.now();
    await claim("during");

    const relist = await waitFor(
      () =>
        proxy.requests.find((request) =>
          request.at > stalledAt && !isWatch(request) &&
          request.path.startsWith("/api/v1/persistentvolumeclaims?")
        ),
      { description: "a relist of the claims", timeoutMs: (IDLE_S + 30) * 1000 },
    );
    const detectedMs = relist.at - stalledAt;
    // The idle timer runs from the last byte, before the stall; then one backoff of at most 1 s.
    assert.ok(detectedMs <= IDLE_S * 1000 + 3000, `relisted ${detectedMs} ms after the stall`);
    await waitForClaimBound(cluster.admin, { namespace: NAMESPACE, name: "during" });
    const boundMs = performance.now() - stalledAt;
    const pvWrites = proxy.requests.filter((request) =>
      request.at > stalledAt && request.method === "POST" &&
      request.path === "/api/v1/persistentvolumes"
    );
    assert.ok(pvWrites.length >= 1 && pvWrites[0]!.at > relist.at, "provisioned after the relist");

    const metrics = await scrape(url);
    const idle = metrics.match(
      /csi_node_provisioner_informer_restarts_total\{resource="persistentvolumeclaims",reason="idle_timeout"\} (\d+)/,
    );
    assert.ok(Number(idle?.[1]) >= 1, `idle_timeout restarts counted:\n${idle?.[0]}`);
    const log = await Deno.readTextFile(agent.logFile);
    assert.match(log, /"Watch stalled \(nothing received, not even a bookmark\): relisting"/);
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    assert.equal(agent.running, true, "the agent never exited");
    report(
      `the agent's ${stall.connections.size} open watches silenced at the proxy ` +
        `(--watch-idle-timeout=${IDLE_S}s); a claim created 0 s later`,
      {
        relistAfterS: seconds(detectedMs),
        boundAfterS: seconds(boundMs),
        informerRestarts: await informerRestarts([url]),
      },
    );
    stall.release();
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  }
});
