import { deepStrictEqual, notStrictEqual, strictEqual } from "node:assert/strict";
import type { DebianPackage } from "../image/dpkg_status.ts";
import type { NpmPackage } from "../image/bundled.ts";
import { cycloneDx, type SbomInput } from "./sbom.ts";

const LIBC: DebianPackage = {
  name: "libc6",
  version: "2.36-9+deb12u14",
  architecture: "amd64",
  source: "glibc",
  sourceVersion: "2.36-9+deb12u14",
  maintainer: "GNU Libc Maintainers <debian-glibc@lists.debian.org>",
  license: "LGPL-2.1-or-later",
};

const GRPC: NpmPackage = {
  name: "@grpc/grpc-js",
  version: "1.14.7",
  license: "Apache-2.0",
  lockPath: "node_modules/@grpc/grpc-js",
  integrity: "sha512-AAEC",
};

const INPUT: SbomInput = {
  product: {
    name: "csi-node-provisioner",
    version: "0.1.0",
    commit: "abc",
    license: "Apache-2.0",
    description: "agent",
    source: "https://github.com/csi-node-provisioner/csi-node-provisioner",
  },
  epochSeconds: 1_700_000_000,
  npm: [
    { name: "ms", version: "2.1.3", license: "MIT", lockPath: "node_modules/ms" },
    GRPC,
    { name: "x", version: "1.0.0", license: "(MIT OR Apache-2.0)", lockPath: "node_modules/x" },
  ],
  bun: { version: "1.4.5", targets: ["bun-linux-x64-baseline", "bun-darwin-arm64"] },
  debian: {
    distro: "debian-12",
    packages: [LIBC, {
      ...LIBC,
      version: "2.36-8",
      sourceVersion: "2.36-8",
      architecture: "arm64",
      installedAs: { name: "libc6-arm64-cross", version: "2.36-8cross1" },
    }],
  },
};

// deno-lint-ignore no-explicit-any
type Any = any;
const bom = cycloneDx(INPUT) as Any;
const byPurl = (purl: string) => bom.components.find((c: Any) => c.purl === purl);

Deno.test("the SBOM is CycloneDX 1.5 about this product at its commit and time", () => {
  strictEqual(bom.bomFormat, "CycloneDX");
  strictEqual(bom.specVersion, "1.5");
  strictEqual(bom.metadata.timestamp, "2023-11-14T22:13:20Z");
  strictEqual(bom.metadata.component.version, "0.1.0");
  deepStrictEqual(bom.metadata.component.properties, [{ name: "vcs:commit", value: "abc" }]);
  deepStrictEqual(bom.metadata.component.externalReferences, [
    { type: "vcs", url: "https://github.com/csi-node-provisioner/csi-node-provisioner" },
  ]);
  strictEqual(bom.components.length, 6);
});

Deno.test("an npm package has its scope as group, its license, purl and the lock's hash", () => {
  const grpc = byPurl("pkg:npm/%40grpc/grpc-js@1.14.7");
  strictEqual(grpc.group, "@grpc");
  strictEqual(grpc.name, "grpc-js");
  deepStrictEqual(grpc.licenses, [{ license: { id: "Apache-2.0" } }]);
  deepStrictEqual(grpc.hashes, [{ alg: "SHA-512", content: "000102" }]);
  deepStrictEqual(byPurl("pkg:npm/x@1.0.0").licenses, [{ expression: "(MIT OR Apache-2.0)" }]);
  deepStrictEqual(byPurl("pkg:npm/ms@2.1.3").hashes, []);
});

Deno.test("Bun is a platform component naming the targets compiled", () => {
  const bun = byPurl("pkg:npm/bun@1.4.5");
  strictEqual(bun.type, "platform");
  deepStrictEqual(bun.properties.map((p: Any) => p.value), [
    "bun-linux-x64-baseline",
    "bun-darwin-arm64",
  ]);
});

Deno.test("each platform's libc6 is a deb purl; the cross package it came from is a property", () => {
  const amd64 = byPurl("pkg:deb/debian/libc6@2.36-9%2Bdeb12u14?arch=amd64&distro=debian-12");
  deepStrictEqual(amd64.licenses, [{ license: { id: "LGPL-2.1-or-later" } }]);
  const arm64 = byPurl("pkg:deb/debian/libc6@2.36-8?arch=arm64&distro=debian-12");
  deepStrictEqual(
    arm64.properties.find((p: Any) => p.name === "debian:installed-as").value,
    "libc6-arm64-cross 2.36-8cross1",
  );
});

Deno.test("the product depends on every component, and the document is reproducible", () => {
  deepStrictEqual(
    new Set(bom.dependencies[0].dependsOn),
    new Set(bom.components.map((c: Any) => c["bom-ref"])),
  );
  deepStrictEqual(cycloneDx(INPUT), bom);
  notStrictEqual(cycloneDx({ ...INPUT, epochSeconds: 1 }).serialNumber, bom.serialNumber);
  strictEqual(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab]/.test(bom.serialNumber), true);
});
