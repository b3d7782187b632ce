/**
 * The release's SBOM as CycloneDX 1.5 JSON, from plain data: the npm
 * packages bundled into the binary, the Bun runtime compiled into it, and
 * the Debian packages of the C libraries in the image. Every field comes
 * from the inputs (the time is the build's epoch), so the same release
 * gives the same document.
 */

import { createHash } from "node:crypto";
import type { DebianPackage } from "../image/dpkg_status.ts";
import type { NpmPackage } from "../image/bundled.ts";

export interface SbomInput {
  product: {
    name: string;
    version: string;
    commit: string;
    license: string;
    description: string;
    /** The source repository's URL. */
    source?: string;
  };
  epochSeconds: number;
  npm: NpmPackage[];
  /** Bun's version, and the `--target`s of the binaries that embed its runtime. */
  bun: { version: string; targets: string[] };
  /** `distro` is os-release's ID-VERSION_ID of the machine the libraries came from. */
  debian: { distro: string; packages: DebianPackage[] };
}

type Json = Record<string, unknown>;

/** A single SPDX identifier is an `id`; anything else (OR, AND, parentheses) an expression. */
export function licenseChoice(spdx: string): Json[] {
  return /^[A-Za-z0-9.+-]+$/.test(spdx) ? [{ license: { id: spdx } }] : [{ expression: spdx }];
}

/** purl of an npm package: the scope's @ is percent-encoded. */
export function npmPurl(name: string, version: string): string {
  return `pkg:npm/${name.replace(/^@/, "%40")}@${encodeURIComponent(version)}`;
}

export function debianPurl(pkg: DebianPackage, distro: string): string {
  const qualifiers = `arch=${pkg.architecture}&distro=${distro}`;
  return `pkg:deb/debian/${pkg.name}@${encodeURIComponent(pkg.version)}?${qualifiers}`;
}

/** npm's integrity (sha512-BASE64) as a CycloneDX hash. */
function integrityHashes(integrity: string | undefined): Json[] {
  const match = integrity?.match(/^sha512-(.+)$/);
  if (!match) return [];
  return [{ alg: "SHA-512", content: Buffer.from(match[1]!, "base64").toString("hex") }];
}

function npmComponent(pkg: NpmPackage): Json {
  const slash = pkg.name.startsWith("@") ? pkg.name.indexOf("/") : -1;
  const purl = npmPurl(pkg.name, pkg.version);
  return {
    type: "library",
    "bom-ref": purl,
    ...(slash < 0 ? {} : { group: pkg.name.slice(0, slash) }),
    name: slash < 0 ? pkg.name : pkg.name.slice(slash + 1),
    version: pkg.version,
    licenses: licenseChoice(pkg.license),
    purl,
    hashes: integrityHashes(pkg.integrity),
    properties: [{ name: "npm:lock-path", value: pkg.lockPath }],
  };
}

function bunComponent(bun: SbomInput["bun"]): Json {
  const purl = npmPurl("bun", bun.version);
  return {
    type: "platform",
    "bom-ref": purl,
    name: "bun",
    version: bun.version,
    description: "The Bun runtime `bun build --compile` puts into every binary",
    licenses: licenseChoice("MIT"),
    purl,
    properties: bun.targets.map((target) => ({ name: "bun:compile-target", value: target })),
  };
}

function debianComponent(pkg: DebianPackage, distro: string): Json {
  const purl = debianPurl(pkg, distro);
  const installedAs = pkg.installedAs === undefined ? [] : [{
    name: "debian:installed-as",
    value: `${pkg.installedAs.name} ${pkg.installedAs.version}`,
  }];
  return {
    type: "library",
    "bom-ref": purl,
    name: pkg.name,
    version: pkg.version,
    ...(pkg.license === undefined ? {} : { licenses: licenseChoice(pkg.license) }),
    purl,
    properties: [
      { name: "debian:source", value: `${pkg.source} ${pkg.sourceVersion}` },
      { name: "debian:architecture", value: pkg.architecture },
      ...installedAs,
    ],
  };
}

/** A UUID (version 5 layout) derived from the document, so the same inputs give the same one. */
function serialNumber(body: unknown): string {
  const hex = createHash("sha256").update(JSON.stringify(body)).digest("hex");
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-` +
    `${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function cycloneDx(input: SbomInput): Json {
  const { product } = input;
  const productRef = `pkg:generic/${product.name}@${product.version}`;
  const components = [
    ...[...input.npm].sort((a, b) => a.lockPath.localeCompare(b.lockPath)).map(npmComponent),
    bunComponent(input.bun),
    ...input.debian.packages.map((pkg) => debianComponent(pkg, input.debian.distro)),
  ];
  const body = {
    metadata: {
      timestamp: new Date(input.epochSeconds * 1000).toISOString().replace(/\.000Z$/, "Z"),
      tools: { components: [{ type: "application", name: "deno task release" }] },
      component: {
        type: "application",
        "bom-ref": productRef,
        name: product.name,
        version: product.version,
        description: product.description,
        licenses: licenseChoice(product.license),
        purl: productRef,
        properties: [{ name: "vcs:commit", value: product.commit }],
        ...(product.source === undefined
          ? {}
          : { externalReferences: [{ type: "vcs", url: product.source }] }),
      },
    },
    components,
    dependencies: [{
      ref: productRef,
      dependsOn: components.map((component) => component["bom-ref"] as string),
    }],
  };
  return {
    bomFormat: "CycloneDX",
    specVersion: "1.5",
    serialNumber: serialNumber(body),
    version: 1,
    ...body,
  };
}
