/**
 * A CPU profile of kube-apiserver (its /debug/pprof/profile, on by default:
 * --profiling), written as the pprof file it serves. `go tool pprof -top
 * FILE` reads it; Go profiles carry their own symbols.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";

/** kube-apiserver ends a request after 60 s (--request-timeout): a profile must be shorter. */
export const PROFILE_SECONDS = 50;

/** Profiles kube-apiserver for PROFILE_SECONDS into `dir`/`name`.pprof; returns the path. */
export async function profileApiServer(
  cluster: RunningCluster,
  options: { dir: string; name: string },
): Promise<string> {
  const output = await new Deno.Command(cluster.binaries.kubectl, {
    args: [
      `--kubeconfig=${cluster.kubeconfigPath}`,
      "get",
      "--raw",
      `/debug/pprof/profile?seconds=${PROFILE_SECONDS}`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(`kube-apiserver profile: ${new TextDecoder().decode(output.stderr).trim()}`);
  }
  mkdirSync(options.dir, { recursive: true });
  const path = join(options.dir, `${options.name}.pprof`);
  writeFileSync(path, output.stdout);
  return path;
}
