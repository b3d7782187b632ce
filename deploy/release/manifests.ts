/**
 * The release's deployment files: the Helm chart packaged by `helm package`,
 * and the kustomize bundle, a tar.gz of deploy/'s manifests (the base, its
 * components and monitoring, whatever is there) and examples/ (whose
 * overlays name the base as ../../deploy, so both keep their places), with
 * the base's image pinned to the release's index digest. Both are reproducible: every time
 * stamp is the build's epoch and every owner root.
 */

import { basename, join } from "node:path";
import { runCommand } from "../image/command.ts";

/** What of deploy/ is not a manifest: the image's build and the chart (packaged on its own). */
const NOT_MANIFESTS = new Set([
  "image",
  "helm",
  "release",
  "Dockerfile",
  "Dockerfile.dockerignore",
]);

/** `helm package` of the chart into `outDir`; resolves to the .tgz written. */
export async function packageChart(
  helm: string,
  chartDir: string,
  outDir: string,
): Promise<string> {
  const output = await runCommand(helm, ["package", chartDir, "--destination", outDir]);
  const path = output.match(/saved it to: (\S+)/)?.[1];
  if (path === undefined) throw new Error(`helm package said nothing of its file: ${output}`);
  return path;
}

/**
 * The base's kustomization with the agent's image pinned to `digest`, its
 * tag dropped (with both, kustomize writes NAME:TAG@DIGEST). Undefined when
 * the base names no image `name`, so the caller can say so.
 */
export function pinImageDigest(
  kustomization: string,
  name: string,
  digest: string,
): string | undefined {
  const entry = new RegExp(`^(  - name: ${name}\\n(?:    .*\\n)*)`, "m");
  if (!entry.test(kustomization)) return undefined;
  return kustomization.replace(
    entry,
    (block: string) =>
      block.replace(/^ {4}(?:digest|newTag): .*\n/gm, "") + `    digest: ${digest}\n`,
  );
}

export interface KustomizeBundle {
  path: string;
  /** Whether the base's image is pinned to the digest. */
  pinned: boolean;
}

/**
 * Writes `outFile`: deploy/'s manifests and examples/ under
 * csi-node-provisioner-kustomize-VERSION/{deploy,examples}/, the base's
 * image pinned to `digest`.
 */
export async function kustomizeBundle(options: {
  deployDir: string;
  examplesDir: string;
  outFile: string;
  digest: string;
  imageName: string;
  epochSeconds: number;
}): Promise<KustomizeBundle> {
  const work = await Deno.makeTempDir({ prefix: "csi-node-provisioner-kustomize-" });
  try {
    const top = basename(options.outFile).replace(/\.tar\.gz$/, "");
    const staged = join(work, top, "deploy");
    await Deno.mkdir(staged, { recursive: true });
    for await (const entry of Deno.readDir(options.deployDir)) {
      if (NOT_MANIFESTS.has(entry.name)) continue;
      await runCommand("cp", ["-a", join(options.deployDir, entry.name), staged]);
    }
    await runCommand("cp", ["-a", options.examplesDir, join(work, top, "examples")]);
    const base = join(staged, "kustomization.yaml");
    const pinned = pinImageDigest(
      await Deno.readTextFile(base),
      options.imageName,
      options.digest,
    );
    if (pinned !== undefined) await Deno.writeTextFile(base, pinned);
    await runCommand("tar", [
      "--sort=name",
      `--mtime=@${options.epochSeconds}`,
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "--mode=u+rwX,go=rX",
      "-C",
      work,
      "-cf",
      join(work, "bundle.tar"),
      top,
    ]);
    await runCommand("gzip", ["-n", "-9", join(work, "bundle.tar")]);
    await Deno.copyFile(join(work, "bundle.tar.gz"), options.outFile);
    return { path: options.outFile, pinned: pinned !== undefined };
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}
