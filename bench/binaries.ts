/**
 * Which binaries a scenario ran, for the results file: dist/ is rebuilt
 * often, so a result names the exact file (version and sha256).
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { oursBinary } from "../tests/cluster/agents.ts";
import { ensureClusterBinaries } from "../tests/cluster/build.ts";
import type { BenchAgent } from "./report.ts";

async function sha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Uint8Array);
  return hash.digest("hex");
}

async function versionLine(path: string): Promise<string> {
  const output = await new Deno.Command(path, { args: ["--version"], stdin: "null" }).output();
  const text = new TextDecoder().decode(output.stdout).trim();
  // Upstream prints its own path first: keep the program name only.
  return text.replace(/^\S*\//, "");
}

/** "ours: csi-node-provisioner 0.1.0, /path (sha256 0123456789ab)" per agent. */
export async function describeAgentBinaries(
  options: { upstream: string },
): Promise<string[]> {
  const paths: Record<BenchAgent, string> = { ours: oursBinary(), upstream: options.upstream };
  return await Promise.all(
    (Object.entries(paths) as [BenchAgent, string][]).map(async ([agent, path]) =>
      `${agent}: ${await versionLine(path)}, ${path} (sha256 ${(await sha256(path)).slice(0, 12)})`
    ),
  );
}

/** describeAgentBinaries() for the upstream binary the cluster harness built (cached). */
export async function describeBenchBinaries(log: (line: string) => void): Promise<string[]> {
  const built = await ensureClusterBinaries({ log });
  return await describeAgentBinaries({ upstream: built.csiProvisioner });
}
