/**
 * The image under test: built once per test process by the image task's own
 * code (reused when dist/ already holds it for the same inputs), and mounted
 * with buildah from the OCI archive, as a runtime would unpack it.
 */

import { ensureImage, type ImageBuild } from "../../deploy/image/main.ts";
import { type Buildah, temporaryBuildah } from "../../deploy/image/buildah.ts";
import { LINUX_ARM64, type Platform } from "../../deploy/image/platforms.ts";

let build: Promise<ImageBuild> | undefined;

/**
 * The image of dist/csi-node-provisioner (compiled by tests/prepare.ts) and,
 * compiled here, the arm64 binary when Bun can fetch its runtime.
 */
export function testImage(): Promise<ImageBuild> {
  build ??= ensureImage({ compile: [LINUX_ARM64], log: (line) => console.log(line) });
  return build;
}

/** The parts of the image configuration a runtime starts the container with. */
export interface ImageConfig {
  User: string;
  Entrypoint: string[];
  Labels: Record<string, string>;
  WorkingDir?: string;
  Env?: string[];
}

export interface MountedImage extends AsyncDisposable {
  /** The container's root file system: the image's layers, unpacked. */
  rootfs: string;
  config: ImageConfig;
  /** The image configuration's creation time. */
  created: string;
  architecture: string;
}

/** A working container of the archive's image for the platform, mounted. */
export async function mountImage(build: ImageBuild, platform: Platform): Promise<MountedImage> {
  const buildah: Buildah = await temporaryBuildah();
  try {
    const container = await buildah.run([
      "from",
      "--quiet",
      "--arch",
      platform.arch,
      `oci-archive:${build.archive}:${build.tag}`,
    ]);
    const rootfs = await buildah.run(["mount", container]);
    const inspected = JSON.parse(await buildah.run(["inspect", "--type", "container", container]));
    const image = inspected.OCIv1 as { config: ImageConfig; created: string; architecture: string };
    return {
      rootfs,
      config: image.config,
      created: image.created,
      architecture: image.architecture,
      [Symbol.asyncDispose]: () => buildah.remove(),
    };
  } catch (error) {
    await buildah.remove();
    throw error;
  }
}
