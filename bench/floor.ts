/**
 * `deno task bench:floor`: what Bun itself costs, so that the agent's start-up
 * CPU and RSS can be read against a floor. Compiled with the agent's own build
 * flags (deploy/image/compile.ts), on one cluster (node-a, the test driver):
 * - hello: prints a line and idles (bench/floor/hello.ts);
 * - csi+watch: opens the CSI connection, calls GetPluginInfo and holds one
 *   watch of PersistentVolumeClaims, through the agent's own modules
 *   (bench/floor/csi_and_watch.ts): the least an agent must do;
 * - csi+watch+http: that plus the metrics registry and the HTTP endpoint,
 *   scraped once (bench/floor/csi_watch_http.ts): what the chosen HTTP and
 *   metrics libraries add before any of the agent's own work;
 * - the agent (ours) and upstream csi-provisioner, started as bench:startup does.
 * Every start, the agents' and the floor programs', runs a fresh, synced copy
 * of the binary (page_cache.ts) with the image's environment (IMAGE_ENV).
 * Each: start → ready, CPU at ready (in 10 ms ticks and on the scheduler's
 * clock), and after 10 s idle the RSS split into anonymous memory and file
 * pages (the executable's code and bytecode).
 * Prints a table and writes it to bench/results/floor.md.
 *
 *   deno task bench:floor [-- --runs N]   (default 5)
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bunBuildArgs, orderEntries } from "../deploy/image/compile.ts";
import { IMAGE_ENV } from "../deploy/image/image.ts";
import { hostPlatform } from "../deploy/image/platforms.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { delay } from "../tests/cluster/wait.ts";
import { describeBenchBinaries } from "./binaries.ts";
import { loadAverage, machineInfo } from "./machine.ts";
import { cpuSeconds, cpuSecondsFine, residentMiB, residentSplitMiB } from "./process_stats.ts";
import { freshCopy } from "./page_cache.ts";
import { measureStartup, startEmptyCluster } from "./startup.ts";
import { summarize } from "./stats.ts";

const IDLE_MS = 10_000;
const REPO = new URL("..", import.meta.url).pathname;
const PROGRAMS = ["hello", "csi_and_watch", "csi_watch_http"] as const;
type Subject = (typeof PROGRAMS)[number] | "ours" | "upstream";

interface Sample {
  readyMs: number;
  cpuMs: number;
  /** CPU at ready on the scheduler's clock (cpuSecondsFine), in ms. */
  cpuFineMs: number;
  rss: number;
  anonymous: number;
  file: number;
}

/**
 * Compiles `entry` (a path from the repository's root) with the agent's build
 * flags into `options.outfile`; with `bytecodeOrder`, its bytecode laid out by
 * that order file, as the agent's is by deploy/image/bytecode.order.
 */
export async function compileWithAgentFlags(
  entry: string,
  options: { outfile: string; commit: string; bytecodeOrder?: string },
): Promise<string> {
  const args = bunBuildArgs(hostPlatform(), { entry, ...options });
  const run = await new Deno.Command(join(REPO, "node_modules/.bin/bun"), { args, cwd: REPO })
    .output();
  if (!run.success) {
    throw new Error(`bun build ${entry}: ${new TextDecoder().decode(run.stderr)}`);
  }
  return options.outfile;
}

/** Compiles bench/floor/<program>.ts with the agent's build flags into outDir. */
function compileFloor(
  program: string,
  outDir: string,
  options: { bytecodeOrder?: string } = {},
): Promise<string> {
  return compileWithAgentFlags(`bench/floor/${program}.ts`, {
    outfile: join(outDir, program),
    commit: "floor",
    ...options,
  });
}

/** Starts a floor program on the cluster's node (its two arguments), with the image's environment. */
function spawnFloor(binary: string, cluster: RunningCluster, env: Record<string, string> = {}) {
  const node = cluster.nodes[0]!;
  return new Deno.Command(binary, {
    args: [node.csiEndpoint.replace(/^unix:\/\//, ""), cluster.kubeconfigPath],
    // The environment the image gives the agent, as the harness gives every agent it starts.
    env: { ...IMAGE_ENV, ...env },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
}

/** Reads the program's output until its "ready" line. */
async function untilReady(child: Deno.ChildProcess, binary: string): Promise<void> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${binary} ended before it was ready`);
    text += value;
  }
  reader.releaseLock();
}

/**
 * Compiles bench/floor/<program>.ts as the agent is: once without an order,
 * run by `record` (which must leave Bun's order file, BUN_BYTECODE_ORDER_OUT,
 * at `orderOut`), then again with that order. So each floor row pays for its
 * bytecode's layout as the agent's row does.
 */
export async function compileOrderedFloor(
  program: string,
  options: { outDir: string; record: (binary: string, orderOut: string) => Promise<unknown> },
): Promise<string> {
  const plainDir = join(options.outDir, "unordered");
  await Deno.mkdir(plainDir, { recursive: true });
  const plain = await compileFloor(program, plainDir);
  const bytecodeOrder = join(options.outDir, `${program}.order`);
  await options.record(plain, bytecodeOrder);
  orderEntries(await Deno.readTextFile(bytecodeOrder));
  return await compileFloor(program, options.outDir, { bytecodeOrder });
}

/** A floor program's start until ready, stopped with SIGTERM, on which Bun writes its order. */
async function recordStart(
  binary: string,
  options: { cluster: RunningCluster; orderOut: string },
): Promise<void> {
  const child = spawnFloor(binary, options.cluster, { BUN_BYTECODE_ORDER_OUT: options.orderOut });
  try {
    await untilReady(child, binary);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stdout.cancel().catch(() => {});
  }
}

async function idleSample(
  pid: number,
  ready: { readyMs: number; cpuMs: number; cpuFineMs: number },
): Promise<Sample> {
  await delay(IDLE_MS);
  return { ...ready, rss: residentMiB(pid), ...residentSplitMiB(pid) };
}

/**
 * Runs a floor program until it prints "ready", then samples it idle. Like
 * the agents (agent_runner.ts), each start runs a fresh, synced copy of the
 * program (page_cache.ts), so that every row's file pages and start-up CPU
 * come from the same page-cache state.
 */
async function measureProgram(built: string, cluster: RunningCluster): Promise<Sample> {
  const binary = await freshCopy(built, `${cluster.dir}/floor-binaries`);
  const started = performance.now();
  const child = spawnFloor(binary, cluster);
  try {
    await untilReady(child, binary);
    const ready = {
      readyMs: performance.now() - started,
      cpuMs: cpuSeconds(child.pid) * 1000,
      cpuFineMs: cpuSecondsFine(child.pid) * 1000,
    };
    return await idleSample(child.pid, ready);
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await child.stdout.cancel().catch(() => {});
  }
}

async function measureAgent(kind: "ours" | "upstream", cluster: RunningCluster): Promise<Sample> {
  const { ready, cpu, cpuFine, rss, anonymous, file } = await measureStartup(cluster, kind);
  return { readyMs: ready, cpuMs: cpu, cpuFineMs: cpuFine, rss, anonymous, file };
}

function table(samples: Map<Subject, Sample[]>): string {
  const rows = [
    "| program | start → ready (ms) | CPU at ready (ms) | CPU at ready, scheduler clock (ms) | RSS after 10 s idle (MiB) | of which anonymous | of which file pages |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const [subject, list] of samples) {
    // Milliseconds whole; MiB to one decimal, since the programs differ by a few MiB.
    const pick = (key: keyof Sample, decimals = 0) =>
      summarize(list.map((sample) => sample[key])).median.toFixed(decimals);
    rows.push(
      `| ${subject} | ${pick("readyMs")} | ${pick("cpuMs")} | ${pick("cpuFineMs")} | ` +
        `${pick("rss", 1)} | ${pick("anonymous", 1)} | ${pick("file", 1)} |`,
    );
  }
  return rows.join("\n");
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: Deno.args, options: { runs: { type: "string" } } });
  const runs = Number(values.runs ?? 5);
  const log = (line: string) => console.error(line);
  const outDir = await Deno.makeTempDir({ prefix: "bench-floor-" });
  const machine = machineInfo();
  const agents = await describeBenchBinaries(log);
  const cluster = await startEmptyCluster(log);
  const binaries: Record<string, string> = {};
  const samples = new Map<Subject, Sample[]>();
  const add = (subject: Subject, sample: Sample) => {
    log(`[floor] ${subject}: ${JSON.stringify(sample)}`);
    samples.set(subject, [...samples.get(subject) ?? [], sample]);
  };
  try {
    for (const program of PROGRAMS) {
      binaries[program] = await compileOrderedFloor(program, {
        outDir,
        record: (binary, orderOut) => recordStart(binary, { cluster, orderOut }),
      });
    }
    for (let run = 0; run < runs; run++) {
      for (const program of PROGRAMS) {
        add(program, await measureProgram(binaries[program]!, cluster));
      }
      add("ours", await measureAgent("ours", cluster));
      add("upstream", await measureAgent("upstream", cluster));
    }
  } finally {
    await cluster.stop();
    await Deno.remove(outDir, { recursive: true });
  }
  const text = `# Runtime floor (deno task bench:floor)\n\n` +
    `- Run: ${new Date().toISOString()}, ${runs} runs each (medians); machine: ${machine.cpus} × ` +
    `${machine.cpuModel}, ${machine.memoryGiB} GiB; load after: ${loadAverage().join(" / ")}.\n` +
    `- Agents: ${agents.join("; ")}.\n\n${table(samples)}\n`;
  console.log(text);
  await Deno.writeTextFile(join(REPO, "bench/results/floor.md"), text);
}

if (import.meta.main) await main();
