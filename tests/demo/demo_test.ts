/**
 * The README's first command, run as a user would: the report shows
 * capacity-aware placement (the 6Gi claim on the only node with room, the
 * 20Gi claim refused by the scheduler for lack of published capacity, and
 * the published capacity dropping by what each node holds), the printed
 * kubeconfig works while the demo runs, and Ctrl-C (SIGINT) stops every
 * process it started.
 */

import { ok, strictEqual } from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { run } from "../deploy/render.ts";

const DEMO_MAIN = join(REPO_ROOT, "tests", "demo", "main.ts");

function spawnDemo(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", DEMO_MAIN, ...args],
    cwd: REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
}

/** Reads stdout into `output.text` until it contains `marker` (or the stream ends). */
async function readUntil(
  reader: ReadableStreamDefaultReader<string>,
  output: { text: string },
  marker: string,
): Promise<void> {
  while (!output.text.includes(marker)) {
    const { value, done } = await reader.read();
    if (done) return;
    output.text += value;
  }
}

function agentPids(text: string): number[] {
  return [...text.matchAll(/agent on node-\w: ready \(pid (\d+)/g)].map((match) =>
    Number(match[1])
  );
}

/** Processes whose command line names the demo's directory (control plane, drivers, agents). */
function processesUsing(dir: string): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    try {
      const commandLine = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).replaceAll(
        "\0",
        " ",
      );
      if (commandLine.includes(dir) && !commandLine.includes("demo/main.ts")) {
        found.push(commandLine);
      }
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
}

function isRunning(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

/** The report's rows, checked by content rather than by exact spacing. */
function checkReport(text: string): void {
  ok(
    text.includes("the upstream hostpath driver of examples/hostpath (hostpath.csi.k8s.io"),
    "says which driver runs",
  );
  // A table row: the name, then its size.
  const row = (name: string) =>
    text.split("\n").find((line) => new RegExp(`^\\s*${name}\\s+\\d+Gi\\s`).test(line)) ?? "";
  ok(/\bdb\s+6Gi\s+node-c\s+pvc-\S+\s+Bound/.test(row("db")), `db: ${row("db")}`);
  ok(/\barchive\s+20Gi\s+-\s+-\s+Pending/.test(row("archive")), `archive: ${row("archive")}`);
  ok(text.includes("did not have enough free storage"), "the scheduler's reason");
  for (const name of ["logs", "web", "cache"]) {
    ok(/\s(Bound)$/.test(row(name)), `${name}: ${row(name)}`);
  }
  // Before and after: node-c held db (6Gi) out of 10Gi, so it publishes at most 4Gi.
  const finalRows = text.split("\n").filter((line) => /^\s*node-\w\s/.test(line)).slice(-3);
  const nodeC = finalRows.find((line) => line.trim().startsWith("node-c")) ?? "";
  ok(/node-c\s+10Gi\s+10Gi\s+(?:[0-4]Gi|0)\s+db 6Gi/.test(nodeC), `node-c: ${nodeC}`);
  // Every node publishes its pool minus the volumes it holds.
  for (const line of finalRows) {
    const [, pool, after, held] =
      line.match(/^\s*node-\w\s+(\d+)Gi\s+\d+Gi\s+(\d+)(?:Gi)?\s+(.*)$/) ?? [];
    const sizes = [...(held ?? "").matchAll(/(\d+)Gi/g)].map((match) => Number(match[1]));
    const sum = sizes.reduce((total, size) => total + size, 0);
    strictEqual(Number(after), Number(pool) - sum, line);
  }
}

Deno.test("demo --exit-after-report prints the placement and capacity report and stops", async () => {
  await ensureClusterBinaries();
  const dir = mkdtempSync(join(tmpdir(), "demo-test-"));
  try {
    const output = await spawnDemo(["--exit-after-report", `--dir=${dir}`]).output();
    const text = new TextDecoder().decode(output.stdout);
    strictEqual(output.code, 0, `${text}\n${new TextDecoder().decode(output.stderr)}`);
    checkReport(text);
    ok(text.includes("[demo] stopped"));
    const pids = agentPids(text);
    strictEqual(pids.length, 3);
    for (const pid of pids) ok(!isRunning(pid), `agent ${pid} still runs`);
    strictEqual(processesUsing(dir).join("\n"), "");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("the demo keeps running with a working kubeconfig until Ctrl-C, then stops everything", async () => {
  const { kubectl } = await ensureClusterBinaries();
  const dir = mkdtempSync(join(tmpdir(), "demo-test-"));
  const child = spawnDemo([`--dir=${dir}`]);
  let exited = false;
  const status = child.status.finally(() => (exited = true));
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const output = { text: "" };
  try {
    await readUntil(reader, output, "Press Ctrl-C");
    ok(output.text.includes("Press Ctrl-C"), `${output.text}\n${exited ? await stderr : ""}`);
    ok(processesUsing(dir).length >= 3 + 3 + 4, "agents, drivers and control plane run");
    checkReport(output.text);
    const kubeconfig = output.text.match(/Kubeconfig: (\S+)/)?.[1];
    strictEqual(kubeconfig, join(dir, "kubeconfig"));
    const pods = await run(kubectl, [
      `--kubeconfig=${kubeconfig}`,
      "get",
      "pods",
      "-n",
      "demo",
      "-o",
      "name",
    ]);
    strictEqual(pods.trim().split("\n").length, 5, pods);
    child.kill("SIGINT");
    await readUntil(reader, output, "[demo] stopped\n");
    strictEqual((await status).code, 0, output.text);
    for (const pid of agentPids(output.text)) ok(!isRunning(pid), `agent ${pid} still runs`);
    strictEqual(processesUsing(dir).join("\n"), "");
  } finally {
    if (!exited) child.kill("SIGKILL");
    await reader.cancel().catch(() => {});
    await status;
    await stderr;
    rmSync(dir, { recursive: true, force: true });
  }
});
