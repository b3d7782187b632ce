/**
 * The agent's OCI image from staged root filesystems (rootfs.ts): one image
 * per platform, FROM scratch, joined in one OCI index and written as an OCI
 * archive. Every time in it is the build's epoch (the commit's time), so the
 * same commit gives the same digests.
 */

import { join } from "node:path";
import type { BuildInfo } from "./build_info.ts";
import { imageLabels } from "./build_info.ts";
import type { Buildah } from "./buildah.ts";
import type { Platform } from "./platforms.ts";
import { AGENT_PATH } from "./rootfs.ts";

/** The image's default user: not root. deploy/daemonset.yaml says when it runs as uid 0. */
export const IMAGE_USER = "65532:65532";
export const ENTRYPOINT: readonly string[] = [AGENT_PATH];

/**
 * The environment the image starts the agent with. Bun's allocator (its
 * mimalloc) reads these when the process starts, before any of the agent's
 * code runs, so the binary cannot set them itself.
 *
 * MIMALLOC_PURGE_HOLES_MIN_INTERVAL: at most one sweep a second, instead of
 * ten, of the free blocks inside a thread's used pages, which Bun's
 * allocator hands back to the kernel each time the event loop goes idle. An
 * agent that handles a claim at a time goes idle after each watch event; the
 * sweeps were a tenth of its CPU at the default client budget (the
 * "mi-scavenger" thread) and a third of that at one a second, with the same
 * peak and idle memory (bench/README.md).
 */
export const IMAGE_ENV: Readonly<Record<string, string>> = Object.freeze({
  MIMALLOC_PURGE_HOLES_MIN_INTERVAL: "1000",
});

export interface StagedPlatform {
  platform: Platform;
  /** A directory staged by stageRootfs(). */
  rootfs: string;
}

/** `buildah config` arguments: platform, entrypoint, user, environment and labels. */
export function configArgs(platform: Platform, info: BuildInfo): string[] {
  const labels = Object.entries(imageLabels(info)).flatMap(([key, value]) => [
    "--label",
    `${key}=${value}`,
  ]);
  const env = Object.entries(IMAGE_ENV).flatMap(([key, value]) => ["--env", `${key}=${value}`]);
  return [
    "--os",
    "linux",
    "--arch",
    platform.arch,
    ...(platform.variant ? ["--variant", platform.variant] : []),
    "--entrypoint",
    JSON.stringify(ENTRYPOINT),
    "--user",
    IMAGE_USER,
    "--workingdir",
    "/",
    ...env,
    "--created-by",
    "deno task image",
    ...labels,
  ];
}

async function buildPlatformImage(
  buildah: Buildah,
  staged: StagedPlatform,
  options: { info: BuildInfo; name: string },
): Promise<string> {
  const container = await buildah.run(["from", "--arch", staged.platform.arch, "scratch"]);
  await buildah.run(["copy", "--chown", "0:0", container, `${staged.rootfs}/`, "/"]);
  await buildah.run(["config", ...configArgs(staged.platform, options.info), container]);
  const image = `${options.name}-${staged.platform.arch}`;
  await buildah.run([
    "commit",
    "--quiet",
    "--rm",
    "--format",
    "oci",
    // Every layer entry's time and the image's `created`.
    "--timestamp",
    String(options.info.epochSeconds),
    // Without buildah's own version label the digest depends only on our inputs.
    "--identity-label=false",
    "--disable-compression=false",
    container,
    image,
  ]);
  return image;
}

/**
 * Builds one image per staged platform and writes their index to `archive`
 * (an OCI archive whose reference name is `tag`). Resolves to the index's
 * digest.
 */
export async function buildImageArchive(
  buildah: Buildah,
  options: { staged: StagedPlatform[]; info: BuildInfo; archive: string; tag: string },
): Promise<string> {
  const list = `localhost/csi-node-provisioner:${options.tag}`;
  await buildah.run(["manifest", "create", list]);
  for (const staged of options.staged) {
    const image = await buildPlatformImage(buildah, staged, {
      info: options.info,
      name: "localhost/csi-node-provisioner",
    });
    await buildah.run(["manifest", "add", list, image]);
  }
  await Deno.remove(options.archive).catch(() => {});
  const digestFile = join(buildah.storage, "index.digest");
  await buildah.run([
    "manifest",
    "push",
    "--quiet",
    "--all",
    "--format",
    "oci",
    "--digestfile",
    digestFile,
    list,
    `oci-archive:${options.archive}:${options.tag}`,
  ]);
  return (await Deno.readTextFile(digestFile)).trim();
}
