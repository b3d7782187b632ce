/**
 * `explain` for operators' machines. It is a subcommand of the one agent
 * binary, so the release ships that binary, under the kubectl plugin's name
 * (`kubectl-csi_node_provisioner-OS-ARCH`; renamed to
 * `kubectl-csi_node_provisioner` on PATH it is `kubectl csi-node-provisioner
 * explain ...`). Linux's are the image's binaries; macOS's are the same
 * entry compiled for Bun's darwin targets, whose runtimes Bun fetches from
 * the npm registry as it does linux-arm64's.
 */

import { join } from "node:path";
import { compileTo, metafilePath } from "../image/compile.ts";
import { binaryPath, PLATFORMS } from "../image/platforms.ts";

export const PLUGIN_NAME = "kubectl-csi_node_provisioner";

export interface ExplainBinary {
  os: "linux" | "darwin";
  arch: "amd64" | "arm64";
  bunTarget: string;
  /** The compiled binary, relative to the repository root. */
  binary: string;
}

export const DARWIN_TARGETS: readonly Pick<ExplainBinary, "arch" | "bunTarget">[] = [
  { arch: "amd64", bunTarget: "bun-darwin-x64" },
  { arch: "arm64", bunTarget: "bun-darwin-arm64" },
];

/** The name a binary has in the release. */
export function releaseName(binary: Pick<ExplainBinary, "os" | "arch">): string {
  return `${PLUGIN_NAME}-${binary.os}-${binary.arch}`;
}

/** The Linux binaries already compiled for the image. */
export function linuxBinaries(): ExplainBinary[] {
  return PLATFORMS.map((platform) => ({
    os: "linux",
    arch: platform.arch,
    bunTarget: platform.bunTarget,
    binary: binaryPath(platform),
  }));
}

/** Compiles the macOS binaries into dist/, each with its metafile. */
export async function compileDarwin(root: string, commit: string): Promise<ExplainBinary[]> {
  const built: ExplainBinary[] = [];
  for (const target of DARWIN_TARGETS) {
    const binary = `dist/${releaseName({ os: "darwin", arch: target.arch })}`;
    await compileTo(target, join(root, binary), { root, commit });
    built.push({ os: "darwin", ...target, binary });
  }
  return built;
}

export function metafileOf(binary: ExplainBinary, root: string): string {
  return metafilePath(join(root, binary.binary));
}
