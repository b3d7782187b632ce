/**
 * Upstream CSI peers built offline from their vendored source archives: the
 * hostpath CSI driver (hostpathplugin) and the snapshot controllers
 * (snapshot-controller, csi-snapshotter). The Go module proxy refuses
 * github.com/kubernetes-csi/*, so they are not in the tools module; each
 * archive is a `git archive` of an upstream tag with its full vendor/ tree.
 *
 * Each archive's sha256 is pinned here and checked before anything is built
 * from it; a missing or different archive is an error naming the file, the
 * pinned sha256 and what to do. The binaries are cached outside the
 * repository, keyed by that sha256, like the control plane (build.ts).
 *
 * Run directly (`deno task cluster:build-peers`) it builds and prints the paths.
 */

import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildProgress, runGoBuild } from "./go_build.ts";

/** One vendored source archive of an upstream tag. */
export interface PeerArchive {
  file: string;
  sha256: string;
  /** The directory every path in the archive starts with. */
  topDir: string;
  /** The upstream repository and tag, for error messages. */
  origin: string;
  /** The tag, stamped into the binaries' version. */
  version: string;
}

export const HOSTPATH_ARCHIVE: PeerArchive = {
  file: "csi-driver-host-path-v1.18.0.tar.gz",
  sha256: "82df90bfe34e06406f7b732dbd024d04f82db92191ffd376e5c3459811bb5110",
  topDir: "csi-driver-host-path-v1.18.0",
  origin: "github.com/kubernetes-csi/csi-driver-host-path tag v1.18.0",
  version: "v1.18.0",
};

export const SNAPSHOTTER_ARCHIVE: PeerArchive = {
  file: "external-snapshotter-v8.6.0.tar.gz",
  sha256: "691660b4379d28e1f2c806d61d910cdd2e0ac2e2a74a554780447aa3f3970272",
  topDir: "external-snapshotter-v8.6.0",
  origin: "github.com/kubernetes-csi/external-snapshotter tag v8.6.0",
  version: "v8.6.0",
};

/** Upstream's central resizer: the reference of the resize differential test. */
export const RESIZER_ARCHIVE: PeerArchive = {
  file: "external-resizer-v2.2.1.tar.gz",
  sha256: "cda3c9819c5cac5899c6a78f8651e1e95c986a8460acefbd5372579b4ba08da8",
  topDir: "external-resizer-v2.2.1",
  origin: "github.com/kubernetes-csi/external-resizer tag v2.2.1",
  version: "v2.2.1",
};

/** Upstream's deploy/kubernetes-distributed manifests of the hostpath driver (no Go code). */
export const HOSTPATH_DEPLOY_ARCHIVE: PeerArchive = {
  file: "csi-driver-host-path-v1.18.0-deploy-distributed.tar.gz",
  sha256: "82b8cec897c524627c2d34cab748c791227df19d5676f69b72d27bd4dbf58e0a",
  topDir: "csi-driver-host-path-v1.18.0",
  origin:
    "github.com/kubernetes-csi/csi-driver-host-path tag v1.18.0, deploy/kubernetes-distributed",
  version: "v1.18.0",
};

/**
 * Real drivers' node DaemonSets that run upstream's csi-provisioner (no Go
 * code): scylladb/local-csi-driver's manifests, Azure/local-csi-driver's and
 * democratic-csi's Helm charts; see ../shared/peers/README.md.
 */
export const DRIVER_DAEMONSETS_ARCHIVE: PeerArchive = {
  file: "driver-daemonsets-2026-12.tar.gz",
  sha256: "ffe77f748654358b921cc517140059ed715a704aad07405da5db1c14edc3e13b",
  topDir: "driver-daemonsets",
  origin: "scylladb/local-csi-driver a341561f, Azure/local-csi-driver cda89151, " +
    "democratic-csi/charts 79a3c025",
  version: "2026-12",
};

/**
 * democratic-csi's source (JavaScript, no vendored dependencies): its
 * local-hostpath driver is a second node-local driver deployed with
 * csi-provisioner in node mode. democratic_install.ts installs it.
 */
export const DEMOCRATIC_ARCHIVE: PeerArchive = {
  file: "democratic-csi-1.9.0.tar.gz",
  sha256: "6b57db169aae187f11b60de106b644e6655ff62ccb41ea2dd6369ca9e3c00685",
  topDir: "democratic-csi-1.9.0",
  origin: "github.com/democratic-csi/democratic-csi v1.9.0, commit 8a4a28a8",
  version: "v1.9.0",
};

export interface PeerBinaries {
  hostpathplugin: string;
  snapshotController: string;
  csiSnapshotter: string;
  csiResizer: string;
}

/** What one archive builds: its main packages and the file each becomes. */
interface PeerBuild {
  name: string;
  archive: PeerArchive;
  binaries: { key: keyof PeerBinaries; pkg: string; file: string }[];
  /** Files of the archive (paths under topDir) kept beside the binaries, by base name. */
  files?: string[];
}

/** The VolumeSnapshot CRDs (client/config/crd/); the group snapshot ones are not needed. */
export const SNAPSHOT_CRD_FILES: readonly string[] = [
  "snapshot.storage.k8s.io_volumesnapshotclasses.yaml",
  "snapshot.storage.k8s.io_volumesnapshotcontents.yaml",
  "snapshot.storage.k8s.io_volumesnapshots.yaml",
];

const HOSTPATH_BUILD: PeerBuild = {
  name: "hostpath",
  archive: HOSTPATH_ARCHIVE,
  binaries: [{ key: "hostpathplugin", pkg: "./cmd/hostpathplugin", file: "hostpathplugin" }],
};

const SNAPSHOTTER_BUILD: PeerBuild = {
  name: "snapshotter",
  archive: SNAPSHOTTER_ARCHIVE,
  binaries: [
    {
      key: "snapshotController",
      pkg: "./cmd/snapshot-controller",
      file: "snapshot-controller",
    },
    { key: "csiSnapshotter", pkg: "./cmd/csi-snapshotter", file: "csi-snapshotter" },
  ],
  files: SNAPSHOT_CRD_FILES.map((file) => `client/config/crd/${file}`),
};

const RESIZER_BUILD: PeerBuild = {
  name: "resizer",
  archive: RESIZER_ARCHIVE,
  binaries: [{ key: "csiResizer", pkg: "./cmd/csi-resizer", file: "csi-resizer" }],
};

/** The snapshotter's cached copies of the three VolumeSnapshot CRDs (built with it). */
export function snapshotCrdPaths(env: Record<string, string | undefined>): string[] {
  const dir = peerCacheDir(SNAPSHOTTER_BUILD.name, SNAPSHOTTER_ARCHIVE, env);
  return SNAPSHOT_CRD_FILES.map((file) => join(dir, file));
}

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export const PEERS_DIR_VARIABLE = "CSI_PEERS_DIR";

/**
 * The directory of a repository's main checkout: for a `git worktree`, whose
 * `.git` is a file `gitdir: MAIN/.git/worktrees/NAME`, that is MAIN.
 */
export function mainCheckout(repoRoot: string): string {
  const dotGit = join(repoRoot, ".git");
  if (!existsSync(dotGit) || statSync(dotGit).isDirectory()) return resolve(repoRoot);
  const match = readFileSync(dotGit, "utf8").match(
    /^gitdir:\s*(.+?)\/\.git\/worktrees\/[^/]+\s*$/m,
  );
  return match?.[1] ? resolve(repoRoot, match[1]) : resolve(repoRoot);
}

/** CSI_PEERS_DIR, else `../shared/peers` next to the repository's main checkout. */
export function peersDir(
  env: Record<string, string | undefined>,
  repoRoot: string = REPO_ROOT,
): string {
  const fromEnv = env[PEERS_DIR_VARIABLE];
  if (fromEnv) return resolve(fromEnv);
  return join(dirname(mainCheckout(repoRoot)), "shared", "peers");
}

/** A peer archive that is missing or is not the pinned one. */
export class PeerArchiveError extends Error {
  override name = "PeerArchiveError";
}

/** The archive's path after checking its sha256 against the pinned value. */
export async function verifiedArchive(dir: string, archive: PeerArchive): Promise<string> {
  const path = join(dir, archive.file);
  const remedy = `Put the pinned archive (${archive.origin}) at ${path}, ` +
    `or set ${PEERS_DIR_VARIABLE} to the directory that holds it; see tests/cluster/README.md.`;
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    throw new PeerArchiveError(
      `${path} is missing: tests/cluster builds from it (expected sha256 ${archive.sha256}). ` +
        remedy,
    );
  }
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== archive.sha256) {
    throw new PeerArchiveError(
      `${path} has sha256 ${actual}, not the pinned ${archive.sha256}: it is altered or another ` +
        `version, and nothing is built from it. ${remedy}`,
    );
  }
  return path;
}

/** `${XDG_CACHE_HOME:-~/.cache}/csi-node-provisioner/<name>-<first 16 hex of the archive sha256>`. */
export function peerCacheDir(
  name: string,
  archive: PeerArchive,
  env: Record<string, string | undefined>,
): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(base, "csi-node-provisioner", `${name}-${archive.sha256.slice(0, 16)}`);
}

/** -ldflags: both main packages keep their version in `main.version`, as upstream's release builds set it. */
export function peerLdflags(archive: PeerArchive): string {
  return `-s -w -X main.version=${archive.version}`;
}

/** The go command's environment for an offline build from the vendor/ tree. */
export const OFFLINE_GO_ENV: Readonly<Record<string, string>> = {
  GOFLAGS: "-mod=vendor",
  GOPROXY: "off",
  // The archives declare go 1.26.0: an older Go fails here instead of fetching a toolchain.
  GOTOOLCHAIN: "local",
};

export interface EnsurePeersOptions {
  /** Which builds are needed; default the hostpath driver and the snapshotter. */
  hostpath?: boolean;
  snapshotter?: boolean;
  /** external-resizer, only for the resize differential test; default not. */
  resizer?: boolean;
  signal?: AbortSignal;
  /** Progress lines; default: stderr. */
  log?: (line: string) => void;
  /** Defaults to Deno.env. */
  env?: Record<string, string | undefined>;
}

/**
 * Paths of the peer binaries asked for, from the cache, building what is
 * missing from the verified archives.
 */
export async function ensurePeerBinaries(
  options: EnsurePeersOptions = {},
): Promise<Partial<PeerBinaries>> {
  const env = options.env ?? Deno.env.toObject();
  const log = options.log ?? ((line: string) => console.error(line));
  const builds = [
    ...(options.hostpath ?? true ? [HOSTPATH_BUILD] : []),
    ...(options.snapshotter ?? true ? [SNAPSHOTTER_BUILD] : []),
    ...(options.resizer ? [RESIZER_BUILD] : []),
  ];
  const found: Partial<PeerBinaries> = {};
  for (const build of builds) {
    const dir = peerCacheDir(build.name, build.archive, env);
    const outputs = [...build.binaries.map((binary) => binary.file), ...(build.files ?? [])];
    const missing = outputs.filter((file) => !existsSync(join(dir, basename(file))));
    if (missing.length > 0) {
      await buildPeer(build, dir, {
        env,
        log,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    }
    for (const binary of build.binaries) found[binary.key] = join(dir, binary.file);
  }
  return found;
}

/**
 * Extracts the verified archive and builds every binary of it. The sources go
 * to the same path every time (`.src-<name>-<key>` beside the cache dir,
 * removed afterwards): go's build cache keys packages by their directory,
 * so a rebuild from a fresh temporary path would compile everything again.
 */
async function buildPeer(
  build: PeerBuild,
  dir: string,
  options: {
    env: Record<string, string | undefined>;
    log: (line: string) => void;
    signal?: AbortSignal;
  },
): Promise<void> {
  const { log } = options;
  const archive = await verifiedArchive(peersDir(options.env), build.archive);
  const started = performance.now();
  await Deno.mkdir(dir, { recursive: true });
  const tmp = join(dir, "..", `.src-${basename(dir)}`);
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
  await Deno.mkdir(tmp);
  try {
    const files = build.binaries.map((binary) => binary.file).join(", ");
    log(`[peers:build] building ${files} ${build.archive.version} from ${archive} into ${dir}`);
    await extract(archive, tmp);
    const out = join(tmp, "bin");
    await runGoBuild({
      toolsDir: join(tmp, build.archive.topDir),
      outDir: out,
      packages: build.binaries.map((binary) => binary.pkg),
      versions: { kubernetes: "", provisioner: "" },
      ldflags: peerLdflags(build.archive),
      env: options.env,
      goEnv: { ...OFFLINE_GO_ENV },
      onProgress: (progress: BuildProgress) => log(`[peers:build] ${progress.message}`),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    for (const file of build.files ?? []) {
      await Deno.copyFile(join(tmp, build.archive.topDir, file), join(dir, basename(file)));
    }
    for (const binary of build.binaries) {
      await Deno.rename(join(out, binary.file), join(dir, binary.file));
    }
    log(`[peers:build] done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

/** `tar -xzf archive -C dir`. */
export async function extract(archive: string, dir: string): Promise<void> {
  const output = await new Deno.Command("tar", {
    args: ["-xzf", archive, "-C", dir],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(`tar -xzf ${archive} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
}

if (import.meta.main) {
  const binaries = await ensurePeerBinaries();
  for (const [key, path] of Object.entries(binaries)) console.log(`${key.padEnd(20)} ${path}`);
}
