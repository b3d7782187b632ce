/**
 * The agent binary the demo runs: dist/csi-node-provisioner, compiled with
 * `deno task compile` when it is missing or older than its sources.
 */

import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { oursBinary } from "../cluster/agents.ts";
import { REPO_ROOT } from "../cluster/drivers.ts";

/** What the binary is built from: the code, and the build's flags and bytecode order. */
const SOURCES = [
  "main.ts",
  "package.json",
  "package-lock.json",
  "lib",
  "proto",
  "deploy/image/compile.ts",
  "deploy/image/bytecode.order",
];

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of Deno.readDirSync(path)) {
    newest = Math.max(newest, newestMtime(join(path, entry.name)));
  }
  return newest;
}

/** Whether the binary is missing or older than a source file. */
export function agentBinaryStale(binary: string = oursBinary()): boolean {
  if (!existsSync(binary)) return true;
  const built = statSync(binary).mtimeMs;
  return SOURCES.some((source) => newestMtime(join(REPO_ROOT, source)) > built);
}

/** Compiles the agent when needed; returns the binary's path. */
export async function ensureAgentBinary(log: (line: string) => void): Promise<string> {
  const binary = oursBinary();
  if (!agentBinaryStale(binary)) {
    log(`agent binary: up to date (${binary})`);
    return binary;
  }
  log("agent binary: compiling with `deno task compile` ...");
  const started = performance.now();
  const output = await new Deno.Command(join(REPO_ROOT, "node_modules/.bin/deno"), {
    args: ["task", "compile"],
    cwd: REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(`deno task compile failed:\n${new TextDecoder().decode(output.stderr)}`);
  }
  log(
    `agent binary: compiled in ${((performance.now() - started) / 1000).toFixed(1)} s (${binary})`,
  );
  return binary;
}
