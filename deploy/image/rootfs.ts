/**
 * The image's root filesystem, staged in a directory: the agent binary, the
 * shared libraries its dynamic loader resolves for it (exactly those: the
 * loader's own `--list`, which is what ldd prints), for scanners the dpkg
 * status entries of the Debian packages those libraries come from and the
 * package.json (name, version, license) of each npm package Bun bundled
 * into the binary (bundled.ts), and /tmp.
 * Nothing else: the binary reads no other file of its own image (its
 * JavaScript is inside it; it reads /proc, /sys and the mounted
 * ServiceAccount, which the runtime provides), so there is no shell, no dpkg
 * and no CA bundle.
 *
 * Both builds use this: `deno task image` (buildah) and deploy/Dockerfile's
 * build stage (`deno run -A deploy/image/rootfs.ts BINARY DIR`), so the two
 * images hold the same files by construction.
 */

import { basename, dirname, join } from "node:path";
import { REPO_ROOT } from "./build_info.ts";
import { npmManifests, packagesOfBinary } from "./bundled.ts";
import { runCommand } from "./command.ts";
import { debianPackagesOf, STATUS_DIR, statusStanza } from "./dpkg_status.ts";
import { elfFactsOfFile } from "./elf.ts";
import { hostPlatform, type Platform, platformOfMachine } from "./platforms.ts";

/** Where the image keeps the agent: deploy/'s manifests and the Dockerfile's ENTRYPOINT name it. */
export const AGENT_PATH = "/usr/local/bin/csi-node-provisioner";

export interface LayoutEntry {
  /** Absolute path in the image. */
  path: string;
  kind: "file" | "dir";
  mode: number;
  /** For files: where the content comes from on this machine... */
  source?: string;
  /** ...or the content itself. */
  content?: string;
}

/** One line of the loader's `--list`: a library (or the loader itself) and where it resolved. */
export interface ResolvedLibrary {
  name: string;
  path: string;
}

/**
 * Parses `ld.so --list` (ldd) output. The kernel's vDSO has no file; a
 * library the loader cannot find fails the build here rather than the
 * agent at start-up.
 */
export function parseLoaderList(text: string): ResolvedLibrary[] {
  const libraries: ResolvedLibrary[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim().replace(/\s*\(0x[0-9a-f]+\)$/, "");
    if (line === "" || line.startsWith("linux-vdso") || line.startsWith("linux-gate")) continue;
    const arrow = line.split(" => ");
    if (arrow.length === 2) {
      const [name, path] = arrow as [string, string];
      if (path === "not found") throw new Error(`the dynamic loader cannot find ${name}`);
      libraries.push({ name, path });
    } else if (line.startsWith("/")) {
      libraries.push({ name: line, path: line });
    }
  }
  return libraries;
}

/**
 * The loader's list for the binary: the host's loader for a host binary;
 * for another platform, its loader from Debian's cross C library under
 * qemu-user (paths come back relative to that sysroot).
 */
export async function resolveLibraries(
  binary: string,
  options: { platform: Platform },
): Promise<{ libraries: ResolvedLibrary[]; sysroot: string }> {
  if (options.platform === hostPlatform()) {
    const list = await runCommand(options.platform.interpreter, ["--list", binary]);
    return { libraries: parseLoaderList(list), sysroot: "" };
  }
  const sysroot = options.platform.crossSysroot;
  const loader = join(sysroot, "lib", basename(options.platform.interpreter));
  const list = await runCommand(options.platform.qemu, ["-L", sysroot, loader, "--list", binary]);
  return { libraries: parseLoaderList(list), sysroot };
}

/** What the image holds for this binary, with where each file comes from. */
export async function imageLayout(binary: string): Promise<{
  platform: Platform;
  entries: LayoutEntry[];
}> {
  const facts = await elfFactsOfFile(binary);
  const platform = platformOfMachine(facts.machine);
  if (facts.interpreter !== platform.interpreter) {
    throw new Error(`${binary} names the loader ${facts.interpreter}, not ${platform.interpreter}`);
  }
  const { libraries, sysroot } = await resolveLibraries(binary, { platform });
  const files: LayoutEntry[] = [{ path: AGENT_PATH, kind: "file", mode: 0o755, source: binary }];
  for (const library of libraries) {
    const isLoader = basename(library.name) === basename(platform.interpreter);
    const path = isLoader
      ? platform.interpreter
      : `/lib/${platform.triplet}/${basename(library.name)}`;
    const source = sysroot !== "" && !library.path.startsWith(sysroot)
      ? join(sysroot, library.path)
      : library.path;
    if (!files.some((file) => file.path === path)) {
      files.push({ path, kind: "file", mode: 0o755, source });
    }
  }
  const librarySources = files.filter((file) => file.path !== AGENT_PATH).map((f) => f.source!);
  for (const pkg of await debianPackagesOf(librarySources, platform)) {
    files.push({
      path: `${STATUS_DIR}/${pkg.name}`,
      kind: "file",
      mode: 0o644,
      content: statusStanza(pkg),
    });
  }
  for (const manifest of npmManifests(await packagesOfBinary(binary, REPO_ROOT))) {
    files.push({ path: manifest.path, kind: "file", mode: 0o644, content: manifest.content });
  }
  // Bun's temporary directory; deploy/ mounts an emptyDir over it.
  const dirs: LayoutEntry[] = [{ path: "/tmp", kind: "dir", mode: 0o1777 }];
  for (const file of files) {
    for (let dir = dirname(file.path); dir !== "/"; dir = dirname(dir)) {
      if (!dirs.some((entry) => entry.path === dir)) {
        dirs.push({ path: dir, kind: "dir", mode: 0o755 });
      }
    }
  }
  const entries = [...dirs, ...files].sort((a, b) => a.path.localeCompare(b.path));
  return { platform, entries };
}

/**
 * Writes the layout into `dir` (which must not exist yet), owned by the
 * caller (root in both builds), every time stamp set to `epochSeconds`
 * so that a Docker build without timestamp rewriting is reproducible too.
 */
export async function stageRootfs(
  entries: LayoutEntry[],
  dir: string,
  options: { epochSeconds: number },
): Promise<void> {
  await Deno.mkdir(dir);
  for (const entry of entries.filter((e) => e.kind === "dir")) {
    await Deno.mkdir(join(dir, entry.path), { recursive: true });
  }
  for (const entry of entries) {
    const target = join(dir, entry.path);
    // copyFile follows symbolic links: the image gets the library itself.
    if (entry.content !== undefined) await Deno.writeTextFile(target, entry.content);
    else if (entry.kind === "file") await Deno.copyFile(entry.source!, target);
    await Deno.chmod(target, entry.mode);
  }
  const time = new Date(options.epochSeconds * 1000);
  for (const entry of [...entries].reverse()) await Deno.utime(join(dir, entry.path), time, time);
  await Deno.utime(dir, time, time);
}

/** `deno run -A deploy/image/rootfs.ts BINARY DIR`: stages the image's files (deploy/Dockerfile). */
if (import.meta.main) {
  const [binary, dir] = Deno.args;
  if (binary === undefined || dir === undefined) {
    console.error("usage: rootfs.ts BINARY DIR  (SOURCE_DATE_EPOCH sets the time stamps)");
    Deno.exit(2);
  }
  const { entries } = await imageLayout(binary);
  await stageRootfs(entries, dir, { epochSeconds: Number(Deno.env.get("SOURCE_DATE_EPOCH") ?? 0) });
  for (const entry of entries) {
    console.log(`${entry.mode.toString(8).padStart(4, "0")} ${entry.path}`);
  }
}
