/**
 * The Debian packages of the C libraries the image takes from the build
 * machine, as dpkg knows them, and their entries for the image's
 * /var/lib/dpkg/status.d/ (the layout distroless uses). A FROM-scratch image
 * has no package database, so without these entries scanners see no glibc
 * in it and cannot match it against Debian's security tracker.
 */

import { runCommand } from "./command.ts";
import type { Platform } from "./platforms.ts";

/** Where each package's status entry goes in the image. */
export const STATUS_DIR = "/var/lib/dpkg/status.d";

/** The fields of a package that dpkg-query reports and a status entry carries. */
interface PackageFields {
  name: string;
  version: string;
  architecture: string;
  source: string;
  sourceVersion: string;
  maintainer: string;
}

export interface DebianPackage extends PackageFields {
  /** The package as the image's platform knows it (libc6, not libc6-arm64-cross). */
  name: string;
  /** The build machine's package the files came from, when it is a cross package. */
  installedAs?: { name: string; version: string };
  /** SPDX expression, where known. */
  license?: string;
}

/** The fields dpkg-query reports of an installed package. */
export interface InstalledPackage extends PackageFields {
  builtUsing: string;
}

/**
 * Debian's copyright files are not machine-readable for every package, so
 * the licenses of the source packages the image can hold are stated here.
 */
const SOURCE_LICENSES: Readonly<Record<string, string>> = {
  glibc: "LGPL-2.1-or-later",
};

const QUERY_FORMAT = [
  "${Package}",
  "${Version}",
  "${Architecture}",
  "${source:Package}",
  "${source:Version}",
  "${Maintainer}",
  "${Built-Using}",
].join("\t") + "\n";

/** Parses `dpkg-query -S` output: `pkg[:arch]: path` (several packages are comma-separated). */
export function parseOwners(text: string): Map<string, string> {
  const owners = new Map<string, string>();
  for (const line of text.split("\n")) {
    const at = line.indexOf(": ");
    if (at < 0 || line.startsWith("diversion ")) continue;
    const packages = line.slice(0, at).split(", ").map((name) => name.split(":")[0]!);
    if (packages.length !== 1) throw new Error(`more than one package owns ${line.slice(at + 2)}`);
    owners.set(line.slice(at + 2), packages[0]!);
  }
  return owners;
}

export function parseInstalled(line: string): InstalledPackage {
  const [name, version, architecture, source, sourceVersion, maintainer, builtUsing] = line.split(
    "\t",
  );
  if (builtUsing === undefined) throw new Error(`unexpected dpkg-query line: ${line}`);
  return {
    name: name!,
    version: version!,
    architecture: architecture!,
    source: source!,
    sourceVersion: sourceVersion!,
    maintainer: maintainer!,
    builtUsing,
  };
}

/**
 * The package the image holds. Debian's cross C library (libc6-arm64-cross)
 * repackages the target architecture's libc6 files unchanged, and names the
 * glibc it was built from in Built-Using: the image holds that libc6, which
 * is what a scanner must look up.
 */
export function imagePackage(installed: InstalledPackage, platform: Platform): DebianPackage {
  const cross = installed.name.match(/^(.+)-[a-z0-9]+-cross$/);
  if (cross === null) {
    return withLicense({
      name: installed.name,
      version: installed.version,
      architecture: installed.architecture,
      source: installed.source,
      sourceVersion: installed.sourceVersion,
      maintainer: installed.maintainer,
    });
  }
  const built = installed.builtUsing.match(/(?:^|, )glibc \(= ([^)]+)\)/);
  if (built === null) {
    throw new Error(`${installed.name} names no glibc in Built-Using: ${installed.builtUsing}`);
  }
  return withLicense({
    name: cross[1]!,
    version: built[1]!,
    architecture: platform.arch,
    source: "glibc",
    sourceVersion: built[1]!,
    maintainer: installed.maintainer,
    installedAs: { name: installed.name, version: installed.version },
  });
}

function withLicense(pkg: DebianPackage): DebianPackage {
  const license = SOURCE_LICENSES[pkg.source];
  return license === undefined ? pkg : { ...pkg, license };
}

/** The package's entry in the image's status.d, in dpkg's status format. */
export function statusStanza(pkg: DebianPackage): string {
  const source = pkg.sourceVersion === pkg.version
    ? pkg.source
    : `${pkg.source} (${pkg.sourceVersion})`;
  return [
    `Package: ${pkg.name}`,
    "Status: install ok installed",
    `Architecture: ${pkg.architecture}`,
    `Source: ${source}`,
    `Version: ${pkg.version}`,
    `Maintainer: ${pkg.maintainer}`,
    "",
  ].join("\n");
}

/**
 * The Debian packages that own the files (as the image's platform knows
 * them). A file no package owns fails the build: its origin would be
 * invisible to scanners.
 */
export async function debianPackagesOf(
  files: string[],
  platform: Platform,
): Promise<DebianPackage[]> {
  const owners = new Map<string, string>();
  for (const file of files) {
    const real = await Deno.realPath(file);
    const found = parseOwners(await runCommand("dpkg-query", ["-S", file]).catch(() => "")).get(
      file,
    ) ?? parseOwners(await runCommand("dpkg-query", ["-S", real]).catch(() => "")).get(real);
    if (found === undefined) throw new Error(`no Debian package owns ${file}`);
    owners.set(file, found);
  }
  const names = [...new Set(owners.values())].sort();
  const text = await runCommand("dpkg-query", ["-W", `-f=${QUERY_FORMAT}`, ...names]);
  return text.split("\n").filter((line) => line !== "").map(parseInstalled).map((pkg) =>
    imagePackage(pkg, platform)
  );
}
