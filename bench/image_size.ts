/**
 * The agent's image against upstream csi-provisioner's, by size: what a
 * node pulls (compressed layers) and what it unpacks.
 *
 * Upstream's image is its static Go binary on gcr.io/distroless/static,
 * which cannot be fetched here. Compared instead, built by the same code
 * (FROM scratch, buildah, gzip) as ours: the csi-provisioner binary that
 * tests/cluster builds (v6.3.0), plus the files distroless/static adds to
 * a binary, taken from this machine's Debian packages: the CA bundle
 * (ca-certificates), the time zones (tzdata), /etc/passwd, /etc/group,
 * /etc/nsswitch.conf and /tmp.
 *
 * `deno task bench:image-size`
 */

import { join } from "node:path";
import { ensureClusterBinaries } from "../tests/cluster/build.ts";
import { readBuildInfo } from "../deploy/image/build_info.ts";
import { temporaryBuildah } from "../deploy/image/buildah.ts";
import { buildImageArchive } from "../deploy/image/image.ts";
import { ensureImage } from "../deploy/image/main.ts";
import { archiveImages } from "../deploy/image/oci_archive.ts";
import { binaryPath, hostPlatform, type Platform } from "../deploy/image/platforms.ts";
import { runCommand } from "../deploy/image/command.ts";
import { imageLayout, stageRootfs } from "../deploy/image/rootfs.ts";
import { REPO_ROOT } from "../deploy/image/build_info.ts";

const MIB = 1024 * 1024;

/** The files of distroless/static beside the binary, from this machine. */
const DISTROLESS_STATIC_FILES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/usr/share/zoneinfo",
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
];

async function stageUpstream(dir: string, binary: string): Promise<void> {
  await Deno.mkdir(join(dir, "usr/local/bin"), { recursive: true });
  await Deno.copyFile(binary, join(dir, "usr/local/bin/csi-provisioner"));
  await Deno.mkdir(join(dir, "tmp"), { mode: 0o1777 });
  for (const path of DISTROLESS_STATIC_FILES) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await runCommand("cp", ["-a", "-L", path, join(dir, path)]);
  }
}

async function unpackedBytes(dir: string): Promise<number> {
  const output = await runCommand("du", ["-sb", dir]);
  return Number(output.split("\t")[0]);
}

async function compressedBytes(archive: string, arch: string): Promise<number> {
  const image = (await archiveImages(archive)).find((candidate) =>
    candidate.architecture === arch
  )!;
  return image.layers.reduce((sum, layer) => sum + layer.size, 0);
}

interface Row {
  image: string;
  binary: number;
  compressed: number;
  unpacked: number;
}

async function upstreamRow(work: string, platform: Platform): Promise<Row> {
  const binary = (await ensureClusterBinaries()).csiProvisioner;
  const rootfs = join(work, "upstream");
  await stageUpstream(rootfs, binary);
  const archive = join(work, "upstream.oci.tar");
  const buildah = await temporaryBuildah();
  try {
    await buildImageArchive(buildah, {
      staged: [{ platform, rootfs }],
      info: await readBuildInfo(),
      archive,
      tag: "upstream",
    });
  } finally {
    await buildah.remove();
  }
  return {
    image: "csi-provisioner v6.3.0 + distroless/static's files",
    binary: (await Deno.stat(binary)).size,
    compressed: await compressedBytes(archive, platform.arch),
    unpacked: await unpackedBytes(rootfs),
  };
}

async function oursRow(work: string, platform: Platform): Promise<Row> {
  const build = await ensureImage();
  const binary = join(REPO_ROOT, binaryPath(platform));
  const rootfs = join(work, "ours");
  await stageRootfs((await imageLayout(binary)).entries, rootfs, { epochSeconds: 0 });
  return {
    image: "csi-node-provisioner (deno task image)",
    binary: (await Deno.stat(binary)).size,
    compressed: await compressedBytes(build.archive, platform.arch),
    unpacked: await unpackedBytes(rootfs),
  };
}

if (import.meta.main) {
  const platform = hostPlatform();
  const work = await Deno.makeTempDir({ prefix: "image-size-" });
  try {
    const rows = [await oursRow(work, platform), await upstreamRow(work, platform)];
    const mib = (bytes: number) => (bytes / MIB).toFixed(1);
    console.log(
      `| linux/${platform.arch} | binary (MiB) | image, compressed (MiB) | image, unpacked (MiB) |`,
    );
    console.log("| --- | --: | --: | --: |");
    for (const row of rows) {
      console.log(
        `| ${row.image} | ${mib(row.binary)} | ${mib(row.compressed)} | ${mib(row.unpacked)} |`,
      );
    }
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}
