/**
 * `deno task compat -- 1.34 1.35 ...`: for each Kubernetes minor version,
 * builds its control plane (binaries.ts, at low priority so that cluster
 * tests running meanwhile keep their timing), runs the integration suites
 * that matter for compatibility on it, one file at a time under the shared
 * cluster-tests lock, and writes tests/compat/results/<minor>.md.
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { releaseOf } from "./binaries.ts";
import {
  type CompatRun,
  parseDenoTest,
  renderRun,
  renderTable,
  replaceTable,
  type SuiteResult,
} from "./results.ts";

export const SUITES: readonly string[] = [
  "tests/integration/provision_test.ts",
  "tests/integration/delete_test.ts",
  "tests/integration/capacity_test.ts",
  "tests/integration/capacity_agents_test.ts",
  "tests/integration/immediate_test.ts",
  "tests/integration/snapshot_test.ts",
  "tests/integration/explain_test.ts",
  // Claims naming VolumeAttributesClasses, which storage.k8s.io/v1 serves from 1.34 on.
  "tests/integration/bad_input_test.ts",
];

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const RESULTS_DIR = join(ROOT, "tests/compat/results");
const LOCK = Deno.env.get("CLUSTER_TESTS_LOCK") ?? "/tmp/cluster-tests.lock";
const AGENT = join(ROOT, "dist/csi-node-provisioner");
const DOC = join(ROOT, "docs/compatibility.md");

async function run(command: string, args: string[], env: Record<string, string> = {}) {
  const output = await new Deno.Command(command, {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return {
    success: output.success,
    stdout: text.decode(output.stdout),
    stderr: text.decode(output.stderr),
  };
}

/** Builds (niced) and returns the directory for CLUSTER_BIN_DIR. */
async function buildBinDir(minor: string): Promise<string> {
  const child = new Deno.Command("nice", {
    args: ["-n", "15", Deno.execPath(), "run", "-A", "tests/compat/binaries.ts", minor],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const output = await child.output();
  if (!output.success) throw new Error(`building Kubernetes ${minor} failed (see above)`);
  return new TextDecoder().decode(output.stdout).trim();
}

async function firstLine(binary: string): Promise<string> {
  const { stdout } = await run(binary, ["--version"]);
  return (stdout.split("\n")[0] ?? "").replace(/^\S*\/csi-provisioner /, "csi-provisioner ");
}

async function commit(): Promise<string> {
  const head = (await run("git", ["rev-parse", "--short", "HEAD"])).stdout.trim();
  // What this task writes itself does not make the tested tree dirty.
  const dirty = (await run("git", [
    "status",
    "--porcelain",
    "--untracked-files=no",
    "--",
    ".",
    ":!tests/compat/results",
    ":!docs/compatibility.md",
  ])).stdout;
  return dirty.trim() ? `${head} + uncommitted changes` : head;
}

async function runSuite(file: string, binDir: string, logDir: string): Promise<SuiteResult> {
  console.error(`[compat] ${file}: waiting for ${LOCK} and running`);
  const deno = Deno.execPath();
  const result = await run("flock", [LOCK, deno, "test", "-A", "--trace-leaks", file], {
    CLUSTER_BIN_DIR: binDir,
  });
  const output = result.stdout + result.stderr;
  const log = join(logDir, file.replaceAll("/", "_") + ".log");
  await Deno.writeTextFile(log, output);
  const suite = parseDenoTest(file, output, result.success);
  console.error(`[compat] ${file}: ${suite.outcome} (log: ${log})`);
  return suite;
}

async function compat(minor: string): Promise<CompatRun> {
  const date = new Date().toISOString().replace(/:\d\d\.\d+Z$/, "Z");
  const tested = await commit();
  const binDir = await buildBinDir(minor);
  const logDir = await Deno.makeTempDir({ prefix: `compat-${minor}-` });
  const suites: SuiteResult[] = [];
  for (const file of SUITES) suites.push(await runSuite(file, binDir, logDir));
  const peers = [
    await firstLine(join(binDir, "etcd")),
    await firstLine(join(binDir, "csi-provisioner")),
  ];
  return {
    minor,
    apiserverVersion: await firstLine(join(binDir, "kube-apiserver")),
    date,
    commit: tested,
    peers: `the default build (${peers.join(", ")})`,
    suites,
  };
}

/** results/<minor>.json (the data) and .md (to read), then the table of every run in DOC. */
async function record(result: CompatRun): Promise<void> {
  await Deno.writeTextFile(
    join(RESULTS_DIR, `${result.minor}.json`),
    JSON.stringify(result, null, 2) + "\n",
  );
  await Deno.writeTextFile(join(RESULTS_DIR, `${result.minor}.md`), renderRun(result));
  const runs: CompatRun[] = [];
  for await (const entry of Deno.readDir(RESULTS_DIR)) {
    if (!entry.name.endsWith(".json")) continue;
    runs.push(JSON.parse(await Deno.readTextFile(join(RESULTS_DIR, entry.name))));
  }
  await Deno.writeTextFile(DOC, replaceTable(await Deno.readTextFile(DOC), renderTable(runs)));
  // Aligned as `deno fmt` leaves every Markdown table of the repository.
  await run(Deno.execPath(), ["fmt", RESULTS_DIR, DOC]);
}

function usageProblems(minors: string[]): string[] {
  const problems: string[] = [];
  if (minors.length === 0) problems.push("name at least one Kubernetes version, e.g. 1.34");
  for (const minor of minors) {
    try {
      releaseOf(minor);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  if (!existsSync(AGENT)) problems.push(`${AGENT} is missing: run \`deno task compile\` first`);
  return problems;
}

if (import.meta.main) {
  // `deno task compat -- 1.34` passes the "--" on.
  const minors = Deno.args.filter((arg) => arg !== "--");
  const problems = usageProblems(minors);
  if (problems.length > 0) {
    console.error(`usage: deno task compat -- <minor>...\n${problems.join("\n")}`);
    Deno.exit(2);
  }
  await Deno.mkdir(RESULTS_DIR, { recursive: true });
  let failed = false;
  for (const minor of minors) {
    const result = await compat(minor);
    await record(result);
    console.log(`${minor}: ${result.suites.map((s) => s.outcome).join(" ")} → ${RESULTS_DIR}`);
    failed ||= result.suites.some((suite) => suite.outcome !== "passed");
  }
  Deno.exit(failed ? 1 : 0);
}
