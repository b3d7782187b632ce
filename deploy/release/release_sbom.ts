/**
 * Gathers the SBOM's inputs from the build: the npm packages each binary's
 * metafile says Bun bundled (the same set for every binary, or the release
 * fails), Bun's version, and the Debian packages of each image platform's
 * libraries, as the image's dpkg status entries record them.
 */

import { join } from "node:path";
import type { BuildInfo } from "../image/build_info.ts";
import { bunVersion } from "../image/bun_runtimes.ts";
import { type DebianPackage, debianPackagesOf } from "../image/dpkg_status.ts";
import { binaryPath, PLATFORMS } from "../image/platforms.ts";
import { AGENT_PATH, imageLayout } from "../image/rootfs.ts";
import { type NpmPackage, packagesOfBinary } from "../image/bundled.ts";
import type { ExplainBinary } from "./explain_binaries.ts";
import { cycloneDx } from "./sbom.ts";

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await Deno.readTextFile(path)) as T;
}

/** The npm packages bundled into the binaries, which must agree. */
export async function npmPackagesOf(
  binaries: ExplainBinary[],
  root: string,
): Promise<NpmPackage[]> {
  let first: { binary: string; packages: NpmPackage[] } | undefined;
  for (const binary of binaries) {
    const packages = await packagesOfBinary(join(root, binary.binary), root);
    if (first === undefined) first = { binary: binary.binary, packages };
    const names = (list: NpmPackage[]) => list.map((p) => `${p.name}@${p.version}`).join(" ");
    if (names(packages) !== names(first.packages)) {
      throw new Error(`${binary.binary} bundles other npm packages than ${first.binary}`);
    }
  }
  if (first === undefined) throw new Error("no binaries to list");
  return first.packages;
}

/** os-release's ID-VERSION_ID (debian-12): the distribution of this machine's packages. */
export async function distro(osRelease = "/etc/os-release"): Promise<string> {
  const text = await Deno.readTextFile(osRelease);
  const field = (key: string) => text.match(new RegExp(`^${key}="?([^"\\n]*)"?$`, "m"))?.[1];
  const id = field("ID");
  const version = field("VERSION_ID");
  if (id !== "debian" || version === undefined) {
    throw new Error(`${osRelease} is not Debian's (ID ${id}): the image's libraries are Debian's`);
  }
  return `${id}-${version}`;
}

/** The Debian packages of every image platform's libraries. */
export async function imageDebianPackages(root: string): Promise<DebianPackage[]> {
  const packages: DebianPackage[] = [];
  for (const platform of PLATFORMS) {
    const { entries } = await imageLayout(join(root, binaryPath(platform)));
    const libraries = entries.filter((entry) => entry.source && entry.path !== AGENT_PATH);
    packages.push(...await debianPackagesOf(libraries.map((entry) => entry.source!), platform));
  }
  return packages;
}

export async function releaseSbom(options: {
  info: BuildInfo;
  binaries: ExplainBinary[];
  root: string;
}): Promise<Record<string, unknown>> {
  const { info, root } = options;
  return cycloneDx({
    product: {
      name: "csi-node-provisioner",
      version: info.version,
      commit: info.commit,
      license: info.license,
      description: info.description,
      ...(info.source === undefined ? {} : { source: info.source }),
    },
    epochSeconds: info.epochSeconds,
    npm: await npmPackagesOf(options.binaries, root),
    bun: {
      version: await bunVersion(root),
      targets: options.binaries.map((binary) => binary.bunTarget),
    },
    debian: { distro: await distro(), packages: await imageDebianPackages(root) },
  });
}
