/**
 * Start-up benchmark of the compiled binary against the test CSI driver:
 * time from process start to /readyz answering 200, and RSS after 10 s idle.
 * `deno task bench:startup [-- --runs N --idle-seconds S]`
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { oursBinary } from "../tests/cluster/agents.ts";
import { freeLoopbackPort } from "../tests/cluster/ports.ts";
import { spawnLogged } from "../tests/cluster/process.ts";
import { spawnTestDriver } from "../tests/csi_driver/spawn.ts";
import { residentMiB } from "./process_stats.ts";
import { formatSummary, summarize } from "./stats.ts";

interface Run {
  readyMs: number;
  rssMiB: number;
}

async function waitReady(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`${url} not ready in time`);
}

async function measureOnce(dir: string, socket: string, idleSeconds: number): Promise<Run> {
  const port = freeLoopbackPort();
  const started = performance.now();
  const agent = spawnLogged({
    name: "csi-node-provisioner",
    command: oursBinary(),
    args: ["--node-deployment", `--csi-address=${socket}`, `--http-endpoint=127.0.0.1:${port}`],
    logFile: join(dir, "agent.log"),
    env: { NODE_NAME: "node-a" },
  });
  try {
    await waitReady(`http://127.0.0.1:${port}/readyz`, Date.now() + 30_000);
    const readyMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
    return { readyMs, rssMiB: residentMiB(agent.pid) };
  } finally {
    await agent.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args.filter((arg) => arg !== "--"),
    options: {
      runs: { type: "string", default: "5" },
      "idle-seconds": { type: "string", default: "10" },
    },
  });
  const runs = Number(values.runs);
  const idleSeconds = Number(values["idle-seconds"]);
  const dir = mkdtempSync(join(tmpdir(), "bench-startup-"));
  const socket = join(dir, "csi.sock");
  const driver = await spawnTestDriver({
    endpoint: socket,
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "10Gi" }],
  });
  const results: Run[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const run = await measureOnce(dir, socket, idleSeconds);
      console.log(
        `run ${i + 1}/${runs}: ready in ${run.readyMs.toFixed(1)} ms, RSS ${
          run.rssMiB.toFixed(1)
        } MiB`,
      );
      results.push(run);
    }
  } finally {
    await driver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const ready = summarize(results.map((run) => run.readyMs));
  const rss = summarize(results.map((run) => run.rssMiB));
  console.log(`\n| metric | median (min–max), ${runs} runs |\n|---|---|`);
  console.log(`| process start → /readyz 200 (ms) | ${formatSummary(ready)} |`);
  console.log(`| RSS after ${idleSeconds} s idle (MiB) | ${formatSummary(rss)} |`);
}

if (import.meta.main) await main();
