/**
 * Builds the real control plane (kube-apiserver, kube-controller-manager,
 * kube-scheduler, etcd, kubectl) and upstream csi-provisioner from the Go tools
 * module in ./tools, into a cache outside the repository keyed by the hash of
 * tools/go.sum. A second call finds them there and builds nothing.
 *
 * CLUSTER_BIN_DIR (or KUBEBUILDER_ASSETS, which envtest users have) may point
 * at pre-built binaries; those found there are used and only the rest is built.
 *
 * Run directly (`deno task cluster:build`) it builds and prints the paths.
 */

import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildProgress, runGoBuild } from "./go_build.ts";

export interface ClusterBinaries {
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  etcd: string;
  kubectl: string;
  csiProvisioner: string;
}

export type ComponentKey = keyof ClusterBinaries;

export interface Component {
  key: ComponentKey;
  /** The file name in every binary directory. */
  file: string;
  /** The main package in the tools module. */
  pkg: string;
  /** The name `go build -o DIR/` gives it (the last path element of pkg, minus /vN). */
  goOutput: string;
}

export const COMPONENTS: readonly Component[] = [
  { key: "etcd", file: "etcd", pkg: "go.etcd.io/etcd/server/v3", goOutput: "server" },
  {
    key: "kubeApiserver",
    file: "kube-apiserver",
    pkg: "k8s.io/kubernetes/cmd/kube-apiserver",
    goOutput: "kube-apiserver",
  },
  {
    key: "kubeControllerManager",
    file: "kube-controller-manager",
    pkg: "k8s.io/kubernetes/cmd/kube-controller-manager",
    goOutput: "kube-controller-manager",
  },
  {
    key: "kubeScheduler",
    file: "kube-scheduler",
    pkg: "k8s.io/kubernetes/cmd/kube-scheduler",
    goOutput: "kube-scheduler",
  },
  { key: "kubectl", file: "kubectl", pkg: "k8s.io/kubernetes/cmd/kubectl", goOutput: "kubectl" },
  {
    key: "csiProvisioner",
    file: "csi-provisioner",
    pkg: "github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner",
    goOutput: "csi-provisioner",
  },
];

/** The envtest asset directory holds only these. */
const ENVTEST_COMPONENTS: readonly ComponentKey[] = ["etcd", "kubeApiserver", "kubectl"];

export const TOOLS_DIR: string = fileURLToPath(new URL("./tools/", import.meta.url));

export interface EnsureOptions {
  signal?: AbortSignal;
  /** Progress lines; default: stderr. */
  log?: (line: string) => void;
  /** Defaults to Deno.env. */
  env?: Record<string, string | undefined>;
}

/** First 16 hex digits of sha256(tools/go.sum): changes whenever a pinned version does. */
export function cacheKey(goSum: string): string {
  return createHash("sha256").update(goSum).digest("hex").slice(0, 16);
}

/** `${XDG_CACHE_HOME:-~/.cache}/csi-node-provisioner/cluster-bin-<key>`. */
export function cacheDir(key: string, env: Record<string, string | undefined>): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(base, "csi-node-provisioner", `cluster-bin-${key}`);
}

/** Binaries already present in the user's pre-built directories, by component. */
export function findPrebuilt(
  env: Record<string, string | undefined>,
): Partial<ClusterBinaries> {
  const found: Partial<ClusterBinaries> = {};
  const sources: [string | undefined, readonly ComponentKey[]][] = [
    [env.CLUSTER_BIN_DIR, COMPONENTS.map((c) => c.key)],
    [env.KUBEBUILDER_ASSETS, ENVTEST_COMPONENTS],
  ];
  for (const [dir, keys] of sources) {
    if (!dir) continue;
    for (const component of COMPONENTS) {
      const path = join(dir, component.file);
      if (found[component.key] === undefined && keys.includes(component.key) && existsSync(path)) {
        found[component.key] = path;
      }
    }
  }
  return found;
}

/**
 * Module versions from go.mod, stamped into the binaries' version output. A
 * module without csi-provisioner (a compatibility module) has no provisioner.
 */
export function pinnedVersions(goMod: string): { kubernetes: string; provisioner?: string } {
  const version = (module: string) =>
    goMod.match(new RegExp(`^\\s*(?:require\\s+)?${module.replaceAll(".", "\\.")}\\s+(v\\S+)`, "m"))
      ?.[1];
  const kubernetes = version("k8s.io/kubernetes");
  if (!kubernetes) throw new Error("go.mod does not require k8s.io/kubernetes");
  const provisioner = version("github.com/kubernetes-csi/external-provisioner/v6");
  return provisioner ? { kubernetes, provisioner } : { kubernetes };
}

/**
 * Paths of all cluster binaries: pre-built ones from CLUSTER_BIN_DIR or
 * KUBEBUILDER_ASSETS, the rest from the cache, building what is missing.
 */
export async function ensureClusterBinaries(options: EnsureOptions = {}): Promise<ClusterBinaries> {
  const env = options.env ?? Deno.env.toObject();
  const prebuilt = findPrebuilt(env);
  const rest = COMPONENTS.filter((component) => prebuilt[component.key] === undefined);
  const built = await ensureModuleBinaries(TOOLS_DIR, rest, { ...options, env });
  return { ...built, ...prebuilt } as ClusterBinaries;
}

/**
 * The given components of a Go tools module (a directory with go.mod and
 * go.sum), from the cache keyed by its go.sum, building those missing there.
 */
export async function ensureModuleBinaries(
  toolsDir: string,
  components: readonly Component[],
  options: EnsureOptions = {},
): Promise<Partial<ClusterBinaries>> {
  const env = options.env ?? Deno.env.toObject();
  const log = options.log ?? ((line: string) => console.error(line));
  const goSum = await Deno.readTextFile(join(toolsDir, "go.sum"));
  const dir = cacheDir(cacheKey(goSum), env);
  const binaries: Partial<ClusterBinaries> = {};
  const missing = components.filter((component) => !existsSync(join(dir, component.file)));
  if (missing.length > 0) {
    await buildInto(toolsDir, dir, missing, {
      log,
      env,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
  for (const component of components) binaries[component.key] = join(dir, component.file);
  return binaries;
}

interface BuildIntoOptions {
  log: (line: string) => void;
  env: Record<string, string | undefined>;
  signal?: AbortSignal;
}

/** One `go build` into a temporary directory, then a rename of each binary into place. */
async function buildInto(
  toolsDir: string,
  dir: string,
  components: Component[],
  options: BuildIntoOptions,
) {
  const { log } = options;
  const started = performance.now();
  await Deno.mkdir(dir, { recursive: true });
  const tmp = await Deno.makeTempDir({ dir: join(dir, ".."), prefix: ".build-" });
  try {
    const goMod = await Deno.readTextFile(join(toolsDir, "go.mod"));
    log(`[cluster:build] building ${components.map((c) => c.file).join(", ")} into ${dir}`);
    log("[cluster:build] the first build takes a while (see tests/cluster/README.md)");
    await runGoBuild({
      toolsDir,
      outDir: tmp,
      packages: components.map((c) => c.pkg),
      versions: pinnedVersions(goMod),
      env: options.env,
      onProgress: (progress: BuildProgress) => log(`[cluster:build] ${progress.message}`),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    for (const component of components) {
      await Deno.rename(join(tmp, component.goOutput), join(dir, component.file));
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    log(`[cluster:build] done in ${seconds} s`);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

if (import.meta.main) {
  const binaries = await ensureClusterBinaries();
  for (const [key, path] of Object.entries(binaries)) console.log(`${key.padEnd(22)} ${path}`);
}
