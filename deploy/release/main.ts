/**
 * `deno task release`: everything a release publishes, in
 * dist/release/VERSION/ (docs/release.md says what each file is):
 *
 *   csi-node-provisioner-VERSION.oci.tar        the image, linux/amd64 and linux/arm64
 *   csi-node-provisioner-VERSION.tgz            the Helm chart (helm package)
 *   csi-node-provisioner-kustomize-VERSION.tar.gz  deploy/ and examples/, image pinned by digest
 *   csi-node-provisioner-VERSION.cdx.json       the SBOM (CycloneDX 1.5)
 *   kubectl-csi_node_provisioner-OS-ARCH        the binary for explain: linux and darwin, amd64 and arm64
 *   SHA256SUMS                                  over all of the above
 *
 * It compiles every binary and builds the image (deno task image's code),
 * so it takes minutes; the directory is written afresh each time.
 */

import { join } from "node:path";
import { REPO_ROOT } from "../image/build_info.ts";
import { runCommand } from "../image/command.ts";
import { ensureImage, type ImageBuild } from "../image/main.ts";
import { type Platform, PLATFORMS } from "../image/platforms.ts";
import { ensureHelm } from "../../tests/cluster/helm_build.ts";
import { writeChecksums } from "./checksums.ts";
import {
  compileDarwin,
  type ExplainBinary,
  linuxBinaries,
  releaseName,
} from "./explain_binaries.ts";
import { kustomizeBundle, packageChart } from "./manifests.ts";
import { releaseSbom } from "./release_sbom.ts";

export function releaseDir(version: string, root = REPO_ROOT): string {
  return join(root, "dist", "release", version);
}

/** The image must hold every platform: a release never leaves one out quietly. */
function requireAllPlatforms(image: ImageBuild): void {
  const missing = PLATFORMS.filter((platform) => !image.platforms.includes(platform));
  if (missing.length > 0) {
    throw new Error(`the image lacks ${missing.map((p) => `linux/${p.arch}`).join(", ")}`);
  }
}

export interface Release {
  dir: string;
  files: string[];
  image: ImageBuild;
  /** The binaries compiled, in dist/ (copied into the release under their release names). */
  binaries: ExplainBinary[];
  kustomizePinned: boolean;
}

export interface ReleaseOptions {
  log: (line: string) => void;
  /**
   * The Linux platforms to compile first (default: all); the others' binaries must be in dist/,
   * from this commit (the image task checks). The macOS binaries are always compiled.
   */
  compile?: readonly Platform[];
}

export async function release(options: ReleaseOptions): Promise<Release> {
  const { log } = options;
  const image = await ensureImage({ log, compile: options.compile ?? PLATFORMS });
  requireAllPlatforms(image);
  const { info } = image;
  const dir = releaseDir(info.version);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  const name = `csi-node-provisioner-${info.version}`;
  await Deno.copyFile(image.archive, join(dir, `${name}.oci.tar`));
  log(`release: image ${image.indexDigest}`);

  const binaries: ExplainBinary[] = [
    ...linuxBinaries(),
    ...await compileDarwin(REPO_ROOT, info.commit),
  ];
  for (const binary of binaries) {
    await Deno.copyFile(join(REPO_ROOT, binary.binary), join(dir, releaseName(binary)));
  }

  const helm = await ensureHelm({ log });
  await packageChart(helm, join(REPO_ROOT, "deploy/helm/csi-node-provisioner"), dir);
  const bundle = await kustomizeBundle({
    deployDir: join(REPO_ROOT, "deploy"),
    examplesDir: join(REPO_ROOT, "examples"),
    outFile: join(dir, `csi-node-provisioner-kustomize-${info.version}.tar.gz`),
    digest: image.indexDigest,
    imageName: "csi-node-provisioner",
    epochSeconds: info.epochSeconds,
  });
  if (!bundle.pinned) {
    log("release: deploy/kustomization.yaml names no csi-node-provisioner image: not pinned");
  }

  const sbom = await releaseSbom({ info, binaries, root: REPO_ROOT });
  await Deno.writeTextFile(join(dir, `${name}.cdx.json`), JSON.stringify(sbom, null, 2) + "\n");
  await writeChecksums(dir);
  const files = [...Deno.readDirSync(dir)].map((entry) => entry.name).sort();
  return { dir, files, image, binaries, kustomizePinned: bundle.pinned };
}

if (import.meta.main) {
  const started = performance.now();
  const done = await release({ log: (line) => console.error(line) });
  await runCommand("sha256sum", ["--quiet", "-c", "SHA256SUMS"], { cwd: done.dir });
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  console.log(`release: ${done.dir.slice(REPO_ROOT.length)} in ${seconds} s`);
  for (const file of done.files) console.log(`  ${file}`);
}
