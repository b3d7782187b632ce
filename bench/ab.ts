/**
 * `deno task bench:ab`: builds of ours against each other, without upstream,
 * alternating A, B, A, B, ... so that a drift in the machine's load hits every
 * build alike. Each run appends one JSON line to --out; --summary prints the
 * medians and ranges per build from such a file. Rounds may be run by separate
 * invocations (one round per hold of the cluster-tests lock) into one file.
 *
 *   deno task bench:ab -- burst --out /tmp/ab.jsonl --rounds 1 A=/tmp/a B=/tmp/b
 *   deno task bench:ab -- memory-at-scale --out /tmp/ab.jsonl --rounds 3 A=/tmp/a B=/tmp/b
 *   deno task bench:ab -- --summary /tmp/ab.jsonl
 *
 * Scenarios: burst and default-budget (a fresh cluster per run, as
 * burst.ts), memory-at-scale (one cluster with the 10,000 + 10,000 fixture
 * for every run, as memory_at_scale.ts).
 */
import { appendFileSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { delay } from "../tests/cluster/wait.ts";
import {
  BURST_SETTINGS,
  type BurstSettings,
  DEFAULT_BUDGET_SETTINGS,
  measureBurst,
} from "./burst.ts";
import { loadAverage } from "./machine.ts";
import { measureIdleAgent, OTHER_NODES, PAIRS } from "./memory_at_scale.ts";
import { startScaleCluster } from "./scale_fixture.ts";
import { formatSummary, summarize } from "./stats.ts";

interface Build {
  name: string;
  binary: string;
}

/** One run's line in the --out file. */
interface RunLine {
  scenario: string;
  build: string;
  at: string;
  loadAverage: number[];
  sample: Record<string, number>;
}

const BURST_LIKE: Record<string, BurstSettings> = {
  burst: BURST_SETTINGS,
  "default-budget": DEFAULT_BUDGET_SETTINGS,
};

const log = (line: string) => console.error(line);

function parseBuilds(positionals: readonly string[]): Build[] {
  return positionals.map((arg) => {
    const [name, binary] = arg.split("=", 2);
    if (!name || !binary) throw new Error(`a build is NAME=BINARY, not "${arg}"`);
    return { name, binary };
  });
}

/** Runs `measure` for every build in turn, `rounds` times, with ours' binary set to each. */
async function alternate(
  run: { scenario: string; builds: Build[]; rounds: number; out: string },
  measure: () => Promise<Record<string, number>>,
): Promise<void> {
  for (let round = 0; round < run.rounds; round++) {
    for (const build of run.builds) {
      Deno.env.set("CSI_NODE_PROVISIONER_BIN", build.binary);
      log(`[ab] ${run.scenario} round ${round + 1}/${run.rounds}: ${build.name}`);
      const sample = await measure();
      const line: RunLine = {
        scenario: run.scenario,
        build: build.name,
        at: new Date().toISOString(),
        loadAverage: loadAverage(),
        sample,
      };
      log(`[ab] ${JSON.stringify(line)}`);
      appendFileSync(run.out, JSON.stringify(line) + "\n");
    }
  }
}

/** The managers that wrote one of the fixture's claims, for the record. */
async function fixtureManagers(cluster: RunningCluster): Promise<string> {
  const text = await cluster.kubectl([
    "get",
    "--raw",
    "/api/v1/namespaces/scale/persistentvolumeclaims?limit=1",
  ]);
  const list = JSON.parse(text) as {
    items: { metadata: { managedFields?: { manager: string; operation: string }[] } }[];
  };
  const fields = list.items[0]?.metadata.managedFields ?? [];
  return fields.map((entry) => `${entry.manager} (${entry.operation})`).join(", ");
}

async function runMemoryAtScale(run: { builds: Build[]; rounds: number; out: string }) {
  const { cluster } = await startScaleCluster(
    { agentNodes: ["node-a"], pairs: PAIRS, otherNodes: OTHER_NODES },
    log,
  );
  try {
    log(`[ab] a fixture claim's managedFields: ${await fixtureManagers(cluster)}`);
    await alternate({ scenario: "memory-at-scale", ...run }, async () => {
      const sample = await measureIdleAgent(cluster, "ours");
      await delay(5_000);
      return sample;
    });
  } finally {
    await cluster.stop();
  }
}

function printSummary(path: string): void {
  const lines = readFileSync(path, "utf8").split("\n").filter((line) => line !== "")
    .map((line) => JSON.parse(line) as RunLine);
  for (const scenario of new Set(lines.map((line) => line.scenario))) {
    const runs = lines.filter((line) => line.scenario === scenario);
    const builds = [...new Set(runs.map((line) => line.build))];
    const metrics = Object.keys(runs[0]?.sample ?? {});
    console.log(`\n${scenario}\n`);
    console.log(
      `| metric | ${builds.map((build) => `${build}: median (min–max), runs`).join(" | ")} |`,
    );
    console.log(`| --- | ${builds.map(() => "---").join(" | ")} |`);
    for (const metric of metrics) {
      const cells = builds.map((build) => {
        const values = runs.filter((line) => line.build === build).map((line) =>
          line.sample[metric]!
        );
        const summary = summarize(values);
        return `${formatSummary(summary, 2)}, ${summary.runs}`;
      });
      console.log(`| ${metric} | ${cells.join(" | ")} |`);
    }
  }
}

async function main(args: readonly string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: args.filter((arg) => arg !== "--"),
    allowPositionals: true,
    options: {
      out: { type: "string" },
      rounds: { type: "string", default: "1" },
      summary: { type: "string" },
    },
  });
  if (values.summary !== undefined) return printSummary(values.summary);
  const [scenario, ...rest] = positionals;
  const rounds = Number(values.rounds);
  if (values.out === undefined || !(rounds >= 1)) throw new Error("--out FILE and --rounds N >= 1");
  const run = { builds: parseBuilds(rest), rounds, out: values.out };
  const settings = scenario === undefined ? undefined : BURST_LIKE[scenario];
  if (settings !== undefined) {
    return await alternate({ scenario: settings.id, ...run }, async () => {
      const measured = await measureBurst("ours", { settings, log });
      return measured.sample;
    });
  }
  if (scenario === "memory-at-scale") return await runMemoryAtScale(run);
  throw new Error(`unknown scenario "${scenario}": burst, default-budget or memory-at-scale`);
}

if (import.meta.main) await main(Deno.args);
