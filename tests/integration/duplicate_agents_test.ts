/**
 * Two agents for one node (the same NODE_NAME twice, by mistake) on a real
 * control plane: they select the same CSIStorageCapacity objects and set
 * different owners (one the Node, the other its own Pod), so each finds the
 * other's write. They must say so (a Warning Event DuplicateAgent on the
 * object, a log line, csistoragecapacities_foreign_writes_total) and never
 * flip the objects back and forth in a loop: at most one write back per
 * capacity poll interval each. The second also waits for the first one's
 * journal lock, not ready, and says so in /readyz.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { agentArgs, agentEnv, NODE_DEPLOYMENT_ARGS, oursBinary } from "../cluster/agents.ts";
import { startCluster } from "../cluster/cluster.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import { spawnLogged } from "../cluster/process.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { scrape, startOurAgents } from "./support.ts";

const POLL_S = 5;
const WINDOW_S = 15;

/** The sum of one counter family's samples over the agents. */
async function counter(urls: string[], name: string, labels = ""): Promise<number> {
  const series = new RegExp(`^${name}\\{[^}]*${labels}[^}]*\\} (\\d+)`, "gm");
  let total = 0;
  for (const url of urls) {
    for (const [, value] of (await scrape(url)).matchAll(series)) total += Number(value);
  }
  return total;
}

Deno.test("two agents for one node: a DuplicateAgent Warning, a log line and a counter; no write loop", async () => {
  await using cluster = await startCluster({ nodes: 1 });
  const node = cluster.node("node-a");
  const namespace = cluster.agentNamespace;
  const first = await startOurAgents(cluster, {
    args: [...NODE_DEPLOYMENT_ARGS, "--capacity-owner-node", `--capacity-poll-interval=${POLL_S}s`],
  });
  const twinPod = await cluster.admin.core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name: "twin" },
      spec: {
        nodeName: "node-a",
        serviceAccountName: "csi-provisioner-node-a",
        automountServiceAccountToken: false,
        containers: [{ name: "agent", image: "twin" }],
      },
    },
  });
  const port = freeLoopbackPort();
  const launch = {
    kind: "ours" as const,
    binary: oursBinary(),
    node: "node-a",
    csiEndpoint: node.csiEndpoint,
    // With the node policy on, the twin's token is bound to its Pod on node-a, as the kubelet's is.
    kubeconfigPath: await cluster.identity(
      { namespace, serviceAccount: "csi-provisioner-node-a" },
      cluster.nodePolicy ? { boundPod: { name: "twin", uid: twinPod.metadata!.uid! } } : {},
    ),
    namespace,
    podName: "twin",
    args: [
      ...NODE_DEPLOYMENT_ARGS,
      "--capacity-ownerref-level=0",
      `--capacity-poll-interval=${POLL_S}s`,
      `--http-endpoint=127.0.0.1:${port}`,
    ],
    logFile: join(cluster.dir, "logs", "agent-node-a-twin.log"),
  };
  const twin = spawnLogged({
    name: "twin agent",
    command: launch.binary,
    args: agentArgs(launch),
    env: agentEnv(launch),
    logFile: launch.logFile,
  });
  const urls = [first.get("node-a")!, `http://127.0.0.1:${port}`];
  try {
    // The twin shares node-a's journal: it waits for the first agent's lock, and says so.
    const notReady = await waitFor(async () => {
      const response = await fetch(`${urls[1]}/readyz`);
      const body = await response.text();
      return response.status === 503 && body.includes("intent journal's lock") ? body : undefined;
    }, { description: "the twin's /readyz naming the journal's lock", timeoutMs: 60_000 });
    assert.match(notReady, /another agent on this node holds it/);
    const event = await waitFor(async () => {
      const events = await cluster.admin.core.listNamespacedEvent({
        namespace,
        fieldSelector: "reason=DuplicateAgent",
      });
      return events.items[0];
    }, { description: "a DuplicateAgent Warning Event", timeoutMs: 6 * POLL_S * 1000 });
    assert.equal(event.type, "Warning");
    assert.equal(event.involvedObject.kind, "CSIStorageCapacity");
    assert.match(event.message ?? "", /overwritten by someone else .*second agent/);
    const logs = [node.agent!.logFile, launch.logFile].map((file) => Deno.readTextFileSync(file));
    assert.ok(logs.some((log) => log.includes("was overwritten by someone else")), "a log line");
    assert.ok(await counter(urls, "csistoragecapacities_foreign_writes_total") >= 1);

    const before = await counter(urls, "csistoragecapacities_writes_total", 'operation="update"');
    await delay(WINDOW_S * 1000);
    const updates = await counter(urls, "csistoragecapacities_writes_total", 'operation="update"') -
      before;
    // Each agent writes back at most once per poll interval (plus one at the window's edges).
    const bound = 2 * (WINDOW_S / POLL_S + 1);
    assert.ok(updates <= bound, `${updates} updates in ${WINDOW_S} s (at most ${bound})`);
    assert.equal(node.agent!.running && twin.running, true, "both agents keep running");
    console.log(
      `[duplicate] injected: a second agent for node-a (owner its Pod; the first: the Node)\n` +
        `[duplicate] counted: ${
          JSON.stringify({
            foreignWrites: await counter(urls, "csistoragecapacities_foreign_writes_total"),
            updatesIn15s: updates,
            bound,
          })
        }`,
    );
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    console.error(
      `twin agent:\n${Deno.readTextFileSync(launch.logFile).split("\n").slice(-40).join("\n")}`,
    );
    throw error;
  } finally {
    await twin.stop();
  }
});
