/**
 * What a build is stamped with, from one source each: the version from
 * package.json, the commit from git (or CSI_NODE_PROVISIONER_COMMIT where
 * there is no .git, as in deploy/Dockerfile's build stage), and the time
 * from the commit (SOURCE_DATE_EPOCH overrides it), so that building the
 * same commit twice gives the same image.
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCommand } from "./command.ts";

export const REPO_ROOT: string = fileURLToPath(new URL("../../", import.meta.url));

export interface BuildInfo {
  version: string;
  /** The commit's full hash, with `-dirty` when the work tree had changes; "unknown" without git. */
  commit: string;
  /** Seconds since the epoch: the image's creation time and every file's time stamp. */
  epochSeconds: number;
  license: string;
  /** The source repository's URL, when package.json names one. */
  source: string | undefined;
  description: string;
}

interface PackageManifest {
  version: string;
  license: string;
  description: string;
  repository?: string | { url?: string };
}

export async function readPackageManifest(root = REPO_ROOT): Promise<PackageManifest> {
  return JSON.parse(await Deno.readTextFile(join(root, "package.json"))) as PackageManifest;
}

async function git(args: string[], root: string): Promise<string | undefined> {
  try {
    return (await runCommand("git", args, { cwd: root })).trim();
  } catch {
    return undefined;
  }
}

/** The commit of the work tree, or of CSI_NODE_PROVISIONER_COMMIT when set. */
export async function currentCommit(
  env: Record<string, string | undefined> = Deno.env.toObject(),
  root = REPO_ROOT,
): Promise<string> {
  const given = env.CSI_NODE_PROVISIONER_COMMIT;
  if (given) return given;
  const head = await git(["rev-parse", "HEAD"], root);
  if (head === undefined) return "unknown";
  const changes = await git(["status", "--porcelain", "--untracked-files=no"], root);
  return changes ? `${head}-dirty` : head;
}

/** SOURCE_DATE_EPOCH, else the commit's time, else 0. */
export async function sourceDateEpoch(
  env: Record<string, string | undefined> = Deno.env.toObject(),
  root = REPO_ROOT,
): Promise<number> {
  const given = env.SOURCE_DATE_EPOCH;
  if (given !== undefined && /^\d+$/.test(given)) return Number(given);
  const time = await git(["log", "-1", "--format=%ct"], root);
  return time && /^\d+$/.test(time) ? Number(time) : 0;
}

function repositoryUrl(manifest: PackageManifest): string | undefined {
  const repository = manifest.repository;
  const url = typeof repository === "string" ? repository : repository?.url;
  return url?.replace(/^git\+/, "").replace(/\.git$/, "");
}

export async function readBuildInfo(
  env: Record<string, string | undefined> = Deno.env.toObject(),
  root = REPO_ROOT,
): Promise<BuildInfo> {
  const manifest = await readPackageManifest(root);
  return {
    version: manifest.version,
    commit: await currentCommit(env, root),
    epochSeconds: await sourceDateEpoch(env, root),
    license: manifest.license,
    source: repositoryUrl(manifest),
    description: manifest.description,
  };
}

/**
 * The image's OCI labels, as deploy/Dockerfile sets them too. The creation
 * time is the image configuration's own `created` field (epochSeconds).
 * `source` is there once package.json names the repository.
 */
export function imageLabels(info: BuildInfo): Record<string, string> {
  return {
    "org.opencontainers.image.title": "csi-node-provisioner",
    "org.opencontainers.image.description": info.description,
    "org.opencontainers.image.version": info.version,
    "org.opencontainers.image.revision": info.commit,
    "org.opencontainers.image.licenses": info.license,
    ...(info.source === undefined ? {} : { "org.opencontainers.image.source": info.source }),
  };
}
