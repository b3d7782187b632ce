/**
 * Chaos: two agents on one node with one journal (the same NODE_NAME twice, a
 * surged rollout, a force-deleted pod still running), each SIGKILLed at
 * random moments of a burst and started again. The journal's lock lets one
 * of them write it at a time: sampled from /proc all along, never do both
 * processes hold the journal file open at once, the waiting one says so in
 * /readyz and its log, and in the end every claim is Bound to one PV with
 * nothing leaked or doubled.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import type { AgentHandle } from "../cluster/agents.ts";
import { startCluster } from "../cluster/cluster.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { createNamespace, waitClaimsBound } from "../cluster/workloads.ts";
import { startOurAgents } from "../integration/support.ts";
import {
  assertClean,
  between,
  callCounts,
  CHAOS_AGENT_ARGS,
  chaosSeed,
  createBurst,
  report,
  seededRandom,
  settledLedger,
} from "./support.ts";

const CLAIMS = 40;
const KILLS = 6;

/** Whether the process has the journal (not its lock file) open now; false once it is gone. */
function holdsJournal(pid: number, journal: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        return target.startsWith(journal) && !target.startsWith(`${journal}.lock`);
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/**
 * Samples both agents until `signal` aborts; counts the samples in which the
 * one process held the journal before and after the other was seen holding
 * it: two writers at once.
 */
async function watchWriters(
  agents: AgentHandle[],
  journal: string,
  signal: AbortSignal,
): Promise<{ samples: number; both: number }> {
  let samples = 0;
  let both = 0;
  while (!signal.aborted) {
    const [a, b] = agents.map((agent) => agent.pid) as [number, number];
    const aBefore = holdsJournal(a, journal);
    const bHolds = holdsJournal(b, journal);
    const aAfter = holdsJournal(a, journal);
    samples++;
    if (aBefore && bHolds && aAfter) both++;
    await delay(20);
  }
  return { samples, both };
}

Deno.test("chaos: two agents sharing one journal on one node, SIGKILLed at random moments of a burst", async () => {
  const seed = chaosSeed();
  const random = seededRandom(seed);
  console.log(`CHAOS shared-journal seed ${seed}`);
  await using cluster = await startCluster({
    nodes: ["node-a"],
    driver: "test",
    driverOptions: { capacity: { fast: "100Gi" } },
    storageCapacity: false,
  });
  const node = cluster.node("node-a");
  const journal = join(Deno.makeTempDirSync({ prefix: "chaos-shared-journal-" }), "journal.json");
  const args = [...CHAOS_AGENT_ARGS, `--journal-path=${journal}`];
  const urls = await startOurAgents(cluster, { args });
  const first = node.agent!;
  const secondPort = freeLoopbackPort();
  const second = await cluster.startAgent(node, {
    kind: "ours",
    rbac: "cluster-admin",
    args: [`--http-endpoint=127.0.0.1:${secondPort}`, ...args],
  });
  const agents = [first, second];
  const secondUrl = `http://127.0.0.1:${secondPort}`;
  const stop = new AbortController();
  const watching = watchWriters(agents, journal, stop.signal);
  try {
    const waiting = await waitFor(async () => {
      const response = await fetch(`${secondUrl}/readyz`).catch(() => undefined);
      const body = (await response?.text()) ?? "";
      return response?.status === 503 && body.includes("journal: waiting") ? body : undefined;
    }, { description: "the second agent to wait for the lock", timeoutMs: 30_000 });
    assert.ok(waiting.includes(`${journal}.lock`), waiting);
    assert.ok((await fetch(`${urls.get("node-a")}/readyz`)).ok, "the first agent is ready");
    const namespace = "shared-journal";
    await createNamespace(cluster.admin, namespace);
    await node.control.setFault({ method: "CreateVolume", latencyMs: 300, latencyMaxMs: 800 });
    const started = performance.now();
    await createBurst(cluster, {
      namespace,
      count: CLAIMS,
      nodes: ["node-a"],
      storageClass: cluster.storageClassName("fast"),
    });
    const killed: string[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      await delay(between(random, 1000, 2500));
      const agent = agents[Math.floor(random() * agents.length)]!;
      killed.push(agent === first ? "first" : "second");
      await agent.kill();
      await agent.restart();
    }
    await node.control.clearFaults();
    await waitClaimsBound(cluster.admin, namespace, { count: CLAIMS, timeoutMs: 240_000 });
    const counted = await settledLedger(cluster, [namespace]);
    stop.abort();
    const writers = await watching;
    report(
      "shared-journal",
      {
        claims: CLAIMS,
        agents: 2,
        kills: killed.join("/"),
        ...await callCounts(node, "CreateVolume"),
      },
      counted,
      {
        "writer samples": writers.samples,
        "samples with two writers": writers.both,
        seconds: Math.round((performance.now() - started) / 100) / 10,
      },
    );
    assert.equal(writers.both, 0, "both agents held the journal open at once");
    assert.ok(writers.samples > 100, "the writers were sampled all along");
    const log = readFileSync(first.logFile, "utf8");
    assert.ok(log.includes("waiting for the intent journal's lock"), "a waiting agent says so");
    assertClean(counted, { bound: CLAIMS });
    assert.equal(counted.volumes, counted.pvs);
  } finally {
    stop.abort();
    await watching;
    for (const agent of agents) await agent.stop();
  }
});
