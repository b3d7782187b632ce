/**
 * The cluster binaries of one Kubernetes minor version: its kube-apiserver,
 * kube-controller-manager, kube-scheduler and kubectl built from the checked-in
 * module modules/<minor>/ (written from the Go module proxy when missing), and
 * etcd and csi-provisioner of the default build. The default version is the
 * default build itself.
 *
 * Run directly (`deno run -A tests/compat/binaries.ts 1.34`) it prints a
 * directory of symlinks to them, for CLUSTER_BIN_DIR.
 */

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  cacheDir,
  type ClusterBinaries,
  COMPONENTS,
  ensureClusterBinaries,
  ensureModuleBinaries,
  pinnedVersions,
  TOOLS_DIR,
} from "../cluster/build.ts";
import { goBinary } from "../cluster/go_build.ts";
import { compatGoMod, CONTROL_PLANE_COMMANDS, KUBERNETES_RELEASES } from "./go_mod.ts";

type Env = Record<string, string | undefined>;

export const MODULES_DIR: string = fileURLToPath(new URL("./modules/", import.meta.url));

/** The release of a minor version, or an error naming the known ones. */
export function releaseOf(minor: string): string {
  const release = KUBERNETES_RELEASES[minor];
  if (!release) {
    throw new Error(
      `unknown Kubernetes version ${minor}: known are ${
        Object.keys(KUBERNETES_RELEASES).join(" ")
      }`,
    );
  }
  return release;
}

/** modules/<minor>/ with go.mod and go.sum: checked in, or written and tidied from the proxy. */
export async function ensureCompatModule(
  minor: string,
  env: Env,
  log: (line: string) => void,
): Promise<string> {
  const dir = join(MODULES_DIR, minor);
  if (existsSync(join(dir, "go.mod")) && existsSync(join(dir, "go.sum"))) return dir;
  const kubernetes = releaseOf(minor);
  log(`[compat] writing ${dir}/go.mod for k8s.io/kubernetes ${kubernetes}`);
  const download = await go(env, MODULES_DIR, [
    "mod",
    "download",
    "-json",
    `k8s.io/kubernetes@${kubernetes}`,
  ]);
  const kubernetesGoMod = await Deno.readTextFile(JSON.parse(download).GoMod);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    join(dir, "go.mod"),
    compatGoMod({ minor, kubernetes, kubernetesGoMod }),
  );
  await go(env, dir, ["mod", "tidy"]);
  return dir;
}

async function go(env: Env, cwd: string, args: string[]): Promise<string> {
  const output = await new Deno.Command(goBinary(env), { args, cwd, stdin: "null" }).output();
  const text = new TextDecoder();
  if (!output.success) throw new Error(`go ${args.join(" ")}: ${text.decode(output.stderr)}`);
  return text.decode(output.stdout);
}

export interface CompatOptions {
  env: Env;
  log: (line: string) => void;
  signal?: AbortSignal;
}

/** All six binaries for a cluster of that minor version. */
export async function ensureCompatBinaries(
  minor: string,
  options: CompatOptions,
): Promise<ClusterBinaries> {
  const kubernetes = releaseOf(minor);
  // The default build, never pre-built binaries the caller's environment points at.
  const env = { ...options.env, CLUSTER_BIN_DIR: undefined, KUBEBUILDER_ASSETS: undefined };
  const defaults = await ensureClusterBinaries({ ...options, env });
  const toolsGoMod = await Deno.readTextFile(join(TOOLS_DIR, "go.mod"));
  if (pinnedVersions(toolsGoMod).kubernetes === kubernetes) return defaults;
  const dir = await ensureCompatModule(minor, env, options.log);
  const controlPlane = COMPONENTS.filter((component) =>
    CONTROL_PLANE_COMMANDS.includes(component.file)
  );
  return { ...defaults, ...await ensureModuleBinaries(dir, controlPlane, { ...options, env }) };
}

/** `${XDG_CACHE_HOME:-~/.cache}/csi-node-provisioner/compat-bin-<minor>`, holding symlinks. */
export async function linkBinDir(
  minor: string,
  binaries: ClusterBinaries,
  env: Env,
): Promise<string> {
  const dir = join(dirname(cacheDir("", env)), `compat-bin-${minor}`);
  await Deno.mkdir(dir, { recursive: true });
  for (const component of COMPONENTS) {
    const link = join(dir, component.file);
    await Deno.remove(link).catch(() => {});
    await Deno.symlink(binaries[component.key], link);
  }
  return dir;
}

if (import.meta.main) {
  const minor = Deno.args[0] ?? "";
  const env = Deno.env.toObject();
  const log = (line: string) => console.error(line);
  const binaries = await ensureCompatBinaries(minor, { env, log });
  console.log(await linkBinDir(minor, binaries, env));
}
