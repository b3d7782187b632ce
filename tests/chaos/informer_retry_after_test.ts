/**
 * Chaos: kube-apiserver's priority and fairness holds the agent's informers
 * in Retry-After waits (throttle.ts: the agent gets one seat, kept busy).
 * With --watch-idle-timeout=5s the quiet watches end and relist every few
 * seconds, and their lists and watches are answered 429 with Retry-After,
 * which the REST client waits out inside the request, up to ten times. An
 * informer so held is failing: /readyz must go 503 within --readiness-window
 * (3 s here) and say it waits for a Retry-After, not look healthy until the
 * waits give up; and be 200 again once the limit is lifted. The agent never
 * exits.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { startOurAgents } from "../integration/support.ts";
import { assertAgentsRunning, probe, report, seconds } from "./control_plane.ts";
import { occupySeat, throttleAgent } from "./throttle.ts";

const WINDOW_S = 3;
const HELD = "as its Retry-After asks";

Deno.test("an informer held by Retry-After waits fails readiness within the window and says why", async () => {
  await using cluster = await startCluster({ nodes: 1 });
  try {
    const node = cluster.nodes[0]!;
    const urls = await startOurAgents(cluster, {
      args: ["--watch-idle-timeout=5s", `--readiness-window=${WINDOW_S}s`, "-v=2"],
    });
    const url = urls.get(node.name)!;
    const throttled = await throttleAgent(cluster, node.name);
    const throttledAt = performance.now();
    const busy = new AbortController();
    const occupied = occupySeat(cluster, {
      kubeconfigPath: throttled.kubeconfigPath,
      signal: busy.signal,
    });
    let samples = 0;
    let lastNotReady = "none";
    let notReady;
    try {
      notReady = await waitFor(async () => {
        samples++;
        const ready = await probe(url, "/readyz");
        if (ready.status === 503) lastNotReady = ready.body;
        return ready.status === 503 && ready.body.includes(HELD) ? ready : undefined;
      }, {
        description: `/readyz 503 naming a Retry-After wait`,
        timeoutMs: 90_000,
        intervalMs: 250,
      });
    } catch (error) {
      throw new Error(`${(error as Error).message}; last 503 body: ${lastNotReady}`);
    } finally {
      busy.abort();
    }
    const notReadyMs = performance.now() - throttledAt;
    const seat = await occupied;
    await throttled.lift();
    assert.match(notReady.body, /informers.*cannot list or watch for \d+ s \(429 /s);
    await waitFor(async () => (await probe(url, "/readyz")).status === 200, {
      description: "/readyz 200 again once the limit is lifted",
      timeoutMs: 90_000,
      intervalMs: 500,
    });
    const backMs = performance.now() - throttledAt - notReadyMs;
    assertAgentsRunning(cluster);
    report(
      "kube-apiserver gave the agent one seat and refused the rest; watches relisted every 5 s",
      {
        notReadyAfterS: seconds(notReadyMs),
        readyAgainAfterLiftS: seconds(backMs),
        readyzSamples: samples,
        seatReads: seat.reads,
        readyz: notReady.body.split("\n").find((line) => line.includes(HELD)),
      },
    );
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  }
});
