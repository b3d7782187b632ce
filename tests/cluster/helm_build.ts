/**
 * Builds helm (for `helm lint` and `helm template` of deploy/helm) from its
 * own Go tools module in ./helm, into a cache outside the repository keyed by
 * the hash of helm/go.sum, like the cluster binaries (build.ts). A second
 * call finds it there and builds nothing. HELM_BIN may point at a helm binary
 * to use instead.
 *
 * helm has its own module because ./tools pins every k8s.io module to the
 * control plane's version with replace lines, which must not apply to helm.
 *
 * Run directly (`deno task deploy:helm-build`) it builds and prints the path.
 */

import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheKey } from "./build.ts";
import { type BuildProgress, runGoBuild } from "./go_build.ts";

export const HELM_TOOLS_DIR: string = fileURLToPath(new URL("./helm/", import.meta.url));
const HELM_PACKAGE = "helm.sh/helm/v3/cmd/helm";
const HELM_MODULE = "helm.sh/helm/v3";

export interface EnsureHelmOptions {
  signal?: AbortSignal;
  /** Progress lines; default: stderr. */
  log?: (line: string) => void;
  /** Defaults to Deno.env. */
  env?: Record<string, string | undefined>;
}

/** `${XDG_CACHE_HOME:-~/.cache}/csi-node-provisioner/helm-<key>/helm`. */
export function helmCachePath(key: string, env: Record<string, string | undefined>): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(base, "csi-node-provisioner", `helm-${key}`, "helm");
}

/** The versions helm/go.mod requires: helm's, and client-go's (the Kubernetes helm targets). */
export function pinnedHelmVersions(
  goMod: string,
): { helm: string; kubeMajor: string; kubeMinor: string } {
  const version = (module: string) => {
    const match = goMod.match(new RegExp(`^\\s*${module.replaceAll(".", "\\.")}\\s+(v\\S+)`, "m"));
    if (!match?.[1]) throw new Error(`helm/go.mod does not require ${module}`);
    return match[1];
  };
  // client-go v0.X.Y is Kubernetes 1.X, as helm's Makefile computes it.
  const [, minor] = version("k8s.io/client-go").replace(/^v/, "").split(".");
  return { helm: version(HELM_MODULE), kubeMajor: "1", kubeMinor: minor ?? "" };
}

/**
 * The -ldflags of helm's own release builds (its Makefile): the version, and
 * the Kubernetes version `helm template` and `helm lint` assume by default.
 */
export function helmLdflags(versions: ReturnType<typeof pinnedHelmVersions>): string {
  return [
    "-s",
    "-w",
    `-X helm.sh/helm/v3/internal/version.version=${versions.helm}`,
    ...["pkg/lint/rules", "pkg/chartutil"].flatMap((pkg) => [
      `-X helm.sh/helm/v3/${pkg}.k8sVersionMajor=${versions.kubeMajor}`,
      `-X helm.sh/helm/v3/${pkg}.k8sVersionMinor=${versions.kubeMinor}`,
    ]),
  ].join(" ");
}

/** The helm binary: HELM_BIN, else the cached build, building it when missing. */
export async function ensureHelm(options: EnsureHelmOptions = {}): Promise<string> {
  const env = options.env ?? Deno.env.toObject();
  if (env.HELM_BIN) return env.HELM_BIN;
  const log = options.log ?? ((line: string) => console.error(line));
  const goSum = await Deno.readTextFile(join(HELM_TOOLS_DIR, "go.sum"));
  const path = helmCachePath(cacheKey(goSum), env);
  if (existsSync(path)) return path;
  const dir = join(path, "..");
  await Deno.mkdir(dir, { recursive: true });
  const tmp = await Deno.makeTempDir({ dir, prefix: ".build-" });
  const started = performance.now();
  try {
    const versions = pinnedHelmVersions(
      await Deno.readTextFile(join(HELM_TOOLS_DIR, "go.mod")),
    );
    log(`[helm:build] building helm ${versions.helm} into ${dir} (a few minutes the first time)`);
    await runGoBuild({
      toolsDir: HELM_TOOLS_DIR,
      outDir: tmp,
      packages: [HELM_PACKAGE],
      versions: { kubernetes: "", provisioner: "" },
      ldflags: helmLdflags(versions),
      env,
      onProgress: (progress: BuildProgress) => log(`[helm:build] ${progress.message}`),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    await Deno.rename(join(tmp, "helm"), path);
    log(`[helm:build] done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
  return path;
}

if (import.meta.main) {
  console.log(await ensureHelm());
}
