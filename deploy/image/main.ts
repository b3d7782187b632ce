/**
 * `deno task image`: compiles the agent for linux/amd64 and linux/arm64,
 * stages each platform's files (rootfs.ts) and builds them with buildah into
 * one OCI index, written to dist/csi-node-provisioner-VERSION.oci.tar with
 * the reference name VERSION. buildah (and, for arm64's libraries, qemu-user
 * and Debian's arm64 C library) is installed from Debian's packages when
 * missing. The same inputs give the same digest; a second run with the same
 * inputs reuses the archive.
 *
 *   deno task image                 compile both platforms, then build
 *   deno task image --no-compile    build from the binaries already in dist/
 */

import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type BuildInfo, imageLabels, readBuildInfo, REPO_ROOT } from "./build_info.ts";
import { temporaryBuildah } from "./buildah.ts";
import { runCommand } from "./command.ts";
import { compileAgent } from "./compile.ts";
import { BUILDAH, crossTools, type DebianTool, ensureDebianTools } from "./debian_packages.ts";
import {
  buildImageArchive,
  ENTRYPOINT,
  IMAGE_ENV,
  IMAGE_USER,
  type StagedPlatform,
} from "./image.ts";
import { binaryPath, hostPlatform, type Platform, PLATFORMS } from "./platforms.ts";
import { imageLayout, type LayoutEntry, stageRootfs } from "./rootfs.ts";

export interface ImageBuild {
  archive: string;
  /** The reference name in the archive: the version. */
  tag: string;
  indexDigest: string;
  platforms: Platform[];
  info: BuildInfo;
  /** The archive was already there for the same inputs. */
  reused: boolean;
}

export interface EnsureImageOptions {
  /** Platforms to compile first; the others must already be in dist/. Default: all. */
  compile?: readonly Platform[];
  log?: (line: string) => void;
  env?: Record<string, string | undefined>;
}

/**
 * The Debian packages the build needs: buildah, and for each other platform
 * qemu-user and that platform's C library (its loader lists the binary's
 * libraries, and the image takes them from there).
 */
export function toolsFor(platforms: readonly Platform[]): DebianTool[] {
  const others = platforms.filter((platform) => platform !== hostPlatform());
  return [BUILDAH, ...others.flatMap(crossTools)];
}

export function archivePath(version: string, root = REPO_ROOT): string {
  return join(root, "dist", `csi-node-provisioner-${version}.oci.tar`);
}

async function fileDigest(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of (await Deno.open(path)).readable) hash.update(chunk);
  return hash.digest("hex");
}

/** Everything the archive depends on: when it is unchanged, the archive is too. */
async function inputsKey(
  layouts: { platform: Platform; entries: LayoutEntry[] }[],
  info: BuildInfo,
): Promise<string> {
  const files = [];
  for (const { platform, entries } of layouts) {
    for (const entry of entries) {
      const digest = entry.source === undefined
        ? createHash("sha256").update(entry.content ?? "").digest("hex")
        : await fileDigest(entry.source);
      files.push([platform.arch, entry.path, entry.mode, digest]);
    }
  }
  const buildah = await runCommand("buildah", ["--version"]);
  const inputs = {
    files,
    labels: imageLabels(info),
    info,
    IMAGE_USER,
    ENTRYPOINT,
    IMAGE_ENV,
    buildah,
  };
  return createHash("sha256").update(JSON.stringify(inputs)).digest("hex");
}

async function compileOrSkip(platform: Platform, log: (line: string) => void): Promise<boolean> {
  try {
    await compileAgent(platform);
    return true;
  } catch (error) {
    log(
      `image: no ${platform.arch} binary, so no linux/${platform.arch} image: ${
        (error as Error).message
      }`,
    );
    return false;
  }
}

/** The commit a compiled binary reports (`--version`), run under qemu-user for another platform. */
export async function binaryCommit(platform: Platform, root = REPO_ROOT): Promise<string> {
  const binary = join(root, binaryPath(platform));
  const output = platform === hostPlatform()
    ? await runCommand(binary, ["--version"])
    : await runCommand(platform.qemu, ["-L", platform.crossSysroot, binary, "--version"]);
  const commit = output.match(/\(commit (\S+)\)/)?.[1];
  if (commit === undefined) {
    throw new Error(`${binaryPath(platform)} --version names no commit: ${output}`);
  }
  return commit;
}

/** The image's revision label must be what its binaries report. */
async function checkBinaryCommit(platform: Platform, commit: string): Promise<void> {
  const compiled = await binaryCommit(platform);
  if (compiled !== commit) {
    throw new Error(
      `${
        binaryPath(platform)
      } was compiled from commit ${compiled}, the work tree is at ${commit}: ` +
        `run deno task compile --platform=${platform.arch}`,
    );
  }
}

/** Builds the image archive, or reuses it when its inputs are unchanged. */
export async function ensureImage(options: EnsureImageOptions = {}): Promise<ImageBuild> {
  const log = options.log ?? ((line: string) => console.error(line));
  const info = await readBuildInfo(options.env ?? Deno.env.toObject());
  await ensureDebianTools(toolsFor(PLATFORMS), { why: "image", log });
  const compile = options.compile ?? PLATFORMS;
  const platforms: Platform[] = [];
  for (const platform of PLATFORMS) {
    const built = compile.includes(platform) ? await compileOrSkip(platform, log) : true;
    if (built && existsSync(join(REPO_ROOT, binaryPath(platform)))) platforms.push(platform);
  }
  if (!platforms.includes(hostPlatform())) {
    throw new Error(`no ${binaryPath(hostPlatform())}: run deno task compile`);
  }
  for (const platform of platforms) await checkBinaryCommit(platform, info.commit);
  const layouts = await Promise.all(
    platforms.map((platform) => imageLayout(join(REPO_ROOT, binaryPath(platform)))),
  );
  const archive = archivePath(info.version);
  const key = await inputsKey(layouts, info);
  const record = `${archive}.json`;
  const previous = existsSync(archive) && existsSync(record)
    ? JSON.parse(await Deno.readTextFile(record)) as { key: string; indexDigest: string }
    : undefined;
  if (previous?.key === key) {
    return {
      archive,
      tag: info.version,
      indexDigest: previous.indexDigest,
      platforms,
      info,
      reused: true,
    };
  }
  const work = await Deno.makeTempDir({ prefix: "csi-node-provisioner-rootfs-" });
  const buildah = await temporaryBuildah();
  try {
    const staged: StagedPlatform[] = [];
    for (const layout of layouts) {
      const rootfs = join(work, layout.platform.arch);
      await stageRootfs(layout.entries, rootfs, { epochSeconds: info.epochSeconds });
      staged.push({ platform: layout.platform, rootfs });
    }
    const indexDigest = await buildImageArchive(buildah, {
      staged,
      info,
      archive,
      tag: info.version,
    });
    await Deno.writeTextFile(record, JSON.stringify({ key, indexDigest }, null, 2) + "\n");
    return { archive, tag: info.version, indexDigest, platforms, info, reused: false };
  } finally {
    await buildah.remove();
    await Deno.remove(work, { recursive: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { "no-compile": { type: "boolean" } } });
  const started = performance.now();
  const build = await ensureImage({ compile: values["no-compile"] ? [] : PLATFORMS });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const relative = build.archive.slice(REPO_ROOT.length);
  console.log(
    `image: ${relative} (${build.platforms.map((p) => `linux/${p.arch}`).join(", ")}), ` +
      `index ${build.indexDigest}, ${build.reused ? "unchanged" : "built"} in ${seconds} s`,
  );
  console.log(
    `push: skopeo copy --all oci-archive:${relative}:${build.tag} ` +
      `docker://REGISTRY/csi-node-provisioner:${build.tag}`,
  );
}
