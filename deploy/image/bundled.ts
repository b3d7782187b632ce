/**
 * The npm packages Bun bundled into a binary, read from the metafile it
 * wrote beside it (compile.ts): a module counts when some of its bytes are
 * in an output, so what tree-shaking dropped is not listed. Each package is
 * checked against package-lock.json; a package the lock file does not pin,
 * or pins at another version, fails the build. The image lists them as
 * installed packages' package.json files (npmManifests), the release's SBOM
 * as components.
 */

import { join } from "node:path";
import { metafilePath } from "./compile.ts";

/** The part of Bun's metafile this reads. */
export interface Metafile {
  outputs: Record<string, { inputs?: Record<string, { bytesInOutput: number }> }>;
}

/** package-lock.json (lockfileVersion 3): its entries keyed by install path. */
export interface LockFile {
  packages: Record<
    string,
    { version?: string; license?: string; integrity?: string; resolved?: string }
  >;
}

export interface NpmPackage {
  name: string;
  version: string;
  /** SPDX expression from the package's package.json. */
  license: string;
  /** Where npm installed it, as the lock file keys it: node_modules/@scope/name. */
  lockPath: string;
  /** The lock file's Subresource Integrity of the tarball (sha512-BASE64). */
  integrity?: string;
}

const NODE_MODULES = "node_modules/";

/**
 * The install path (node_modules/[@scope/]name, nested ones included) of a
 * module path, or undefined for the project's own modules. Paths may be
 * relative to the build's directory or reach through a symbolic link.
 */
export function installPath(modulePath: string): string | undefined {
  const start = modulePath.indexOf(NODE_MODULES);
  if (start < 0) return undefined;
  const parts = modulePath.slice(start).split("/");
  const last = parts.lastIndexOf("node_modules");
  const nameParts = parts[last + 1]?.startsWith("@") ? 2 : 1;
  return parts.slice(0, last + 1 + nameParts).join("/");
}

/** The install paths of the packages with bytes in the binary, sorted. */
export function bundledInstallPaths(metafile: Metafile): string[] {
  const paths = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [module, input] of Object.entries(output.inputs ?? {})) {
      const path = installPath(module);
      if (path !== undefined && input.bytesInOutput > 0) paths.add(path);
    }
  }
  return [...paths].sort();
}

interface PackageManifest {
  name: string;
  version: string;
  license?: string;
}

/**
 * The bundled packages, read from their package.json in `root` and checked
 * against the lock file: same version, and a license named.
 */
export async function bundledPackages(
  metafile: Metafile,
  lock: LockFile,
  root: string,
): Promise<NpmPackage[]> {
  const packages: NpmPackage[] = [];
  for (const lockPath of bundledInstallPaths(metafile)) {
    const manifest = JSON.parse(
      await Deno.readTextFile(join(root, lockPath, "package.json")),
    ) as PackageManifest;
    packages.push(checkedAgainstLock(manifest, lockPath, lock));
  }
  return packages;
}

/** The package as the SBOM lists it, or an error saying how it disagrees with the lock file. */
export function checkedAgainstLock(
  manifest: PackageManifest,
  lockPath: string,
  lock: LockFile,
): NpmPackage {
  const locked = lock.packages[lockPath];
  if (locked === undefined) {
    throw new Error(`${lockPath} (${manifest.name}) is bundled but not in package-lock.json`);
  }
  if (locked.version !== manifest.version) {
    throw new Error(
      `${lockPath} is ${manifest.version} in node_modules, ${locked.version} in ` +
        `package-lock.json: run npm install`,
    );
  }
  if (!manifest.license) throw new Error(`${lockPath} names no license in its package.json`);
  return {
    name: manifest.name,
    version: manifest.version,
    license: manifest.license,
    lockPath,
    ...(locked.integrity === undefined ? {} : { integrity: locked.integrity }),
  };
}

/**
 * Where the image lists the bundled packages, as npm would have installed
 * them: NPM_ROOT/node_modules/NAME/package.json. Image scanners read
 * installed packages' package.json files; nothing reads these at run time.
 */
export const NPM_ROOT = "/usr/local/lib/csi-node-provisioner";

/** The package.json files the image holds for the packages: name, version and license only. */
export function npmManifests(packages: NpmPackage[]): { path: string; content: string }[] {
  return packages.map((pkg) => ({
    path: `${NPM_ROOT}/${pkg.lockPath}/package.json`,
    content:
      JSON.stringify({ name: pkg.name, version: pkg.version, license: pkg.license }, null, 2) +
      "\n",
  }));
}

/** The packages bundled into `binary`, from the metafile beside it; `root` holds node_modules. */
export async function packagesOfBinary(binary: string, root: string): Promise<NpmPackage[]> {
  const metafile = await Deno.readTextFile(metafilePath(binary)).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    throw new Error(`${binary} has no metafile beside it: compile it again`);
  });
  const lock = JSON.parse(await Deno.readTextFile(join(root, "package-lock.json"))) as LockFile;
  return await bundledPackages(JSON.parse(metafile) as Metafile, lock, root);
}
