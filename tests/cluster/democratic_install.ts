/**
 * democratic-csi installed from its pinned source archive (peers.ts
 * DEMOCRATIC_ARCHIVE): extracted, with its production dependencies installed
 * by `npm ci` from the archive's own package-lock.json, into a cache
 * directory keyed by the archive's sha256, like the Go peers. The install
 * happens in a temporary directory beside it that is renamed into place, so
 * an interrupted install leaves nothing that looks installed.
 *
 * Run directly it installs and prints the path.
 */

import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { type DebianTool, ensureDebianTools } from "../../deploy/image/debian_packages.ts";
import {
  DEMOCRATIC_ARCHIVE,
  extract,
  PeerArchiveError,
  peerCacheDir,
  peersDir,
  verifiedArchive,
} from "./peers.ts";

export interface DemocraticInstall {
  /** The installed source tree (bin/, src/, node_modules/). */
  dir: string;
  /** bin/democratic-csi, run by `node` through its shebang. */
  bin: string;
}

export interface EnsureDemocraticOptions {
  signal?: AbortSignal;
  /** Progress lines; default: stderr. */
  log?: (line: string) => void;
  /** Defaults to Deno.env. */
  env?: Record<string, string | undefined>;
}

/** Programs the local-hostpath driver runs: node itself, df (GetCapacity), du and rsync (snapshots, clones). */
const REQUIRED_PROGRAMS = ["node", "npm", "df", "du", "rsync"];

/** Installed with apt-get when missing, as the other tests' Debian packages are. */
const RSYNC: DebianTool = { provides: "rsync", package: "rsync" };

/** rsync installed if missing, then every program the driver runs checked. */
async function ensurePrograms(
  env: Record<string, string | undefined>,
  log: (line: string) => void,
): Promise<void> {
  await ensureDebianTools([RSYNC], { log, why: "democratic-csi's snapshots and clones" });
  checkPrograms(env);
}

/** The cache directory: `${XDG_CACHE_HOME:-~/.cache}/csi-node-provisioner/democratic-<16 hex>`. */
export function democraticDir(env: Record<string, string | undefined>): string {
  return peerCacheDir("democratic", DEMOCRATIC_ARCHIVE, env);
}

function installOf(dir: string): DemocraticInstall {
  return { dir, bin: join(dir, "bin", "democratic-csi") };
}

function onPath(program: string, env: Record<string, string | undefined>): boolean {
  return (env.PATH ?? "").split(delimiter).some((dir) => dir && existsSync(join(dir, program)));
}

/** One error naming every program the driver needs that is not on PATH. */
export function checkPrograms(env: Record<string, string | undefined>): void {
  const missing = REQUIRED_PROGRAMS.filter((program) => !onPath(program, env));
  if (missing.length > 0) {
    throw new PeerArchiveError(
      `democratic-csi's local-hostpath driver needs ${missing.join(", ")} on PATH ` +
        `(node and npm: Node.js 20; rsync copies snapshots and clones), not found in ` +
        `PATH=${env.PATH ?? ""}`,
    );
  }
}

/** The installed democratic-csi, installing it from the verified archive when missing. */
export async function ensureDemocratic(
  options: EnsureDemocraticOptions = {},
): Promise<DemocraticInstall> {
  const env = options.env ?? Deno.env.toObject();
  const log = options.log ?? ((line: string) => console.error(line));
  const dir = democraticDir(env);
  const install = installOf(dir);
  if (existsSync(install.bin)) {
    await ensurePrograms(env, log);
    return install;
  }
  const archive = await verifiedArchive(peersDir(env), DEMOCRATIC_ARCHIVE);
  await ensurePrograms(env, log);
  const started = performance.now();
  const parent = join(dir, "..");
  await Deno.mkdir(parent, { recursive: true });
  const tmp = await Deno.makeTempDir({ dir: parent, prefix: ".install-democratic-" });
  try {
    log(`[peers:democratic] installing ${archive} into ${dir} (npm ci)`);
    await extract(archive, tmp);
    const source = join(tmp, DEMOCRATIC_ARCHIVE.topDir);
    await npmCi(source, env, options.signal);
    await Deno.rename(source, dir).catch((error) => {
      // Another process finished the same install first.
      if (!existsSync(install.bin)) throw error;
    });
    log(`[peers:democratic] done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
  return install;
}

/** `npm ci --omit=dev`: exactly the archive's package-lock.json, no dev dependencies. */
async function npmCi(
  cwd: string,
  env: Record<string, string | undefined>,
  signal: AbortSignal | undefined,
): Promise<void> {
  const args = ["ci", "--omit=dev", "--no-audit", "--no-fund", "--loglevel=error"];
  const output = await new Deno.Command("npm", {
    args,
    cwd,
    clearEnv: true,
    env: Object.fromEntries(
      Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    ...(signal ? { signal } : {}),
  }).output();
  if (!output.success) {
    const decoder = new TextDecoder();
    throw new Error(
      `npm ${args.join(" ")} in ${cwd} failed (exit ${output.code}):\n` +
        decoder.decode(output.stdout) + decoder.decode(output.stderr),
    );
  }
}

if (import.meta.main) {
  console.log((await ensureDemocratic()).bin);
}
