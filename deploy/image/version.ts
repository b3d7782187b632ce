/**
 * One version, package.json's, and every place that must repeat it because
 * it cannot read package.json: the lock file, the Helm chart's version and
 * appVersion, the kustomize base's image tag, the Dockerfile's VERSION, and
 * the image references in the README, docs/deploying.md and the Dockerfile's
 * comment. The binary (lib/runtime/version.ts) and the image's tag read
 * package.json themselves.
 *
 *   deno task version          print every place and its version
 *   deno task version 0.2.0    set them all
 */

import { join } from "node:path";
import { REPO_ROOT } from "./build_info.ts";

export interface VersionSite {
  file: string;
  /** Matches the version as group 1; with the g flag, every match must agree. */
  pattern: RegExp;
}

const SEMVER = String.raw`(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)`;

export const VERSION_SITES: readonly VersionSite[] = [
  { file: "package.json", pattern: new RegExp(String.raw`^  "version": "${SEMVER}"`, "m") },
  {
    file: "package-lock.json",
    pattern: new RegExp(String.raw`^(?:  |      )"version": "${SEMVER}"`, "gm"),
  },
  {
    file: "deploy/helm/csi-node-provisioner/Chart.yaml",
    pattern: new RegExp(`^version: ${SEMVER}$`, "m"),
  },
  {
    file: "deploy/helm/csi-node-provisioner/Chart.yaml",
    pattern: new RegExp(`^appVersion: "${SEMVER}"$`, "m"),
  },
  { file: "deploy/kustomization.yaml", pattern: new RegExp(`^    newTag: ${SEMVER}$`, "m") },
  { file: "deploy/Dockerfile", pattern: new RegExp(`^ARG VERSION=${SEMVER}$`, "m") },
  { file: "deploy/Dockerfile", pattern: new RegExp(`csi-node-provisioner:${SEMVER}`, "g") },
  { file: "README.md", pattern: new RegExp(`csi-node-provisioner[-: ]${SEMVER}`, "g") },
  { file: "README.md", pattern: new RegExp(String.raw`\.oci\.tar:${SEMVER}`, "g") },
  { file: "docs/deploying.md", pattern: new RegExp(`csi-node-provisioner[-: ]${SEMVER}`, "g") },
  { file: "docs/deploying.md", pattern: new RegExp(String.raw`\.oci\.tar:${SEMVER}`, "g") },
  { file: "CHANGELOG.md", pattern: new RegExp(`^## ${SEMVER}`, "m") },
];

/** Every version a site's file states (the lock file's first two "version" lines are ours). */
export function versionsAt(site: VersionSite, text: string): string[] {
  if (!site.pattern.global) {
    const match = text.match(site.pattern);
    return match ? [match[1]!] : [];
  }
  const all = [...text.matchAll(site.pattern)].map((match) => match[1]!);
  return site.file === "package-lock.json" ? all.slice(0, 2) : all;
}

/** The site's text with its versions replaced (only the first two in the lock file). */
export function withVersion(site: VersionSite, text: string, version: string): string {
  let replaced = 0;
  const limit = site.file === "package-lock.json" ? 2 : site.pattern.global ? Infinity : 1;
  return text.replace(site.pattern, (whole: string, old: string) => {
    if (replaced++ >= limit) return whole;
    return whole.replace(old, version);
  });
}

export async function readVersions(
  root = REPO_ROOT,
): Promise<{ site: VersionSite; versions: string[] }[]> {
  return await Promise.all(VERSION_SITES.map(async (site) => ({
    site,
    versions: versionsAt(site, await Deno.readTextFile(join(root, site.file))),
  })));
}

if (import.meta.main) {
  const [version] = Deno.args;
  if (version !== undefined) {
    if (!new RegExp(`^${SEMVER}$`).test(version)) throw new Error(`${version} is not a version`);
    for (const site of VERSION_SITES) {
      const path = join(REPO_ROOT, site.file);
      await Deno.writeTextFile(path, withVersion(site, await Deno.readTextFile(path), version));
    }
  }
  for (const { site, versions } of await readVersions()) {
    console.log(`${site.file.padEnd(46)} ${versions.join(", ") || "(none)"}`);
  }
}
