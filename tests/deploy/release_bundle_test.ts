/**
 * `deno task release`, run once (under a minute on two cores when the Bun
 * runtimes are cached) with the host binary tests/prepare.ts compiled: what
 * it writes, the SBOM checked against package-lock.json, the modules Bun
 * bundled and the image's own files, and SHA256SUMS checked by sha256sum.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createHash } from "node:crypto";
import { basename, join } from "node:path";
import { NPM_ROOT } from "../../deploy/image/bundled.ts";
import { runCommand } from "../../deploy/image/command.ts";
import { LINUX_ARM64, LINUX_X64, type Platform } from "../../deploy/image/platforms.ts";
import { metafileOf } from "../../deploy/release/explain_binaries.ts";
import { type Release, release } from "../../deploy/release/main.ts";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { mountImage } from "../image/image_fixture.ts";
import { parseObjects, run, theObject } from "./render.ts";

interface Component {
  type: string;
  name: string;
  group?: string;
  version: string;
  purl: string;
  licenses?: unknown[];
  properties?: { name: string; value: string }[];
}

// The host's binary is tests/prepare.ts's, which other test files run meanwhile: compiled again
// here, it would be rewritten under them. The image tests compile arm64 the same way.
const done: Release = await release({ log: (line) => console.log(line), compile: [LINUX_ARM64] });
const version = basename(done.dir);
const sbom = JSON.parse(
  await Deno.readTextFile(join(done.dir, `csi-node-provisioner-${version}.cdx.json`)),
) as { components: Component[]; specVersion: string };
const lock = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "package-lock.json"))) as {
  packages: Record<string, { version: string }>;
};
const npmComponents = sbom.components.filter((c) =>
  c.purl.startsWith("pkg:npm/") && c.name !== "bun"
);
const fullName = (c: Component) => c.group === undefined ? c.name : `${c.group}/${c.name}`;

Deno.test("the release holds the image, chart, bundle, SBOM, four binaries and SHA256SUMS", () => {
  deepStrictEqual(done.files, [
    "SHA256SUMS",
    `csi-node-provisioner-${version}.cdx.json`,
    `csi-node-provisioner-${version}.oci.tar`,
    `csi-node-provisioner-${version}.tgz`,
    `csi-node-provisioner-kustomize-${version}.tar.gz`,
    "kubectl-csi_node_provisioner-darwin-amd64",
    "kubectl-csi_node_provisioner-darwin-arm64",
    "kubectl-csi_node_provisioner-linux-amd64",
    "kubectl-csi_node_provisioner-linux-arm64",
  ]);
  strictEqual(sbom.specVersion, "1.5");
});

Deno.test("sha256sum -c verifies every file of the release against SHA256SUMS", async () => {
  const sums = await Deno.readTextFile(join(done.dir, "SHA256SUMS"));
  deepStrictEqual(
    sums.trim().split("\n").map((line) => line.split("  ")[1]),
    done.files.filter((file) => file !== "SHA256SUMS"),
  );
  await runCommand("sha256sum", ["--strict", "-c", "SHA256SUMS"], { cwd: done.dir });
});

Deno.test("every npm package in the SBOM is in package-lock.json at the same version, with a license", () => {
  ok(npmComponents.length > 20, `${npmComponents.length} npm packages`);
  for (const component of npmComponents) {
    const locked = lock.packages[`node_modules/${fullName(component)}`];
    strictEqual(locked?.version, component.version, fullName(component));
    ok((component.licenses ?? []).length === 1, `${fullName(component)} has a license`);
  }
});

Deno.test("every node_modules package with bytes in any of the four binaries is in the SBOM", async () => {
  const listed = new Set(npmComponents.map(fullName));
  strictEqual(done.binaries.length, 4);
  for (const binary of done.binaries) {
    const metafile = JSON.parse(await Deno.readTextFile(metafileOf(binary, REPO_ROOT))) as {
      outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
    };
    const bundled = new Set<string>();
    for (const output of Object.values(metafile.outputs)) {
      for (const [path, input] of Object.entries(output.inputs ?? {})) {
        const match = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
        if (match && input.bytesInOutput > 0) bundled.add(match[1]!);
      }
    }
    ok(bundled.has("@grpc/grpc-js") && bundled.has("pino"), `${binary.binary}: ${[...bundled]}`);
    deepStrictEqual([...bundled].filter((name) => !listed.has(name)), [], binary.binary);
  }
  ok(!listed.has("deno"), "a development tool is not listed");
});

Deno.test("the SBOM names the Bun that compiled the binaries", async () => {
  const bun = sbom.components.find((c) => c.name === "bun")!;
  strictEqual(bun.version, (await runCommand("node_modules/.bin/bun", ["--version"])).trim());
  strictEqual(bun.type, "platform");
});

async function sha256(path: string): Promise<string> {
  return createHash("sha256").update(await Deno.readFile(path)).digest("hex");
}

/** Files under a directory of the image, relative to its root. */
async function filesUnder(rootfs: string, dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relative: string) => {
    for await (const entry of Deno.readDir(join(rootfs, relative))) {
      const path = join(relative, entry.name);
      if (entry.isDirectory) await walk(path);
      else found.push(path);
    }
  };
  await walk(dir).catch(() => {});
  return found.sort();
}

for (const platform of [LINUX_X64, LINUX_ARM64] as Platform[]) {
  Deno.test(`linux/${platform.arch}: the image lists the SBOM's npm packages, and its dpkg entries the packages its libraries are from`, async () => {
    const archive = join(done.dir, `csi-node-provisioner-${version}.oci.tar`);
    await using image = await mountImage({ ...done.image, archive }, platform);
    const libraries = [
      ...await filesUnder(image.rootfs, "lib"),
      ...await filesUnder(image.rootfs, "lib64"),
    ];
    ok(libraries.some((path) => path.endsWith("libc.so.6")), libraries.join(", "));
    const statuses = await filesUnder(image.rootfs, "var/lib/dpkg/status.d");
    const entries = await Promise.all(statuses.map(async (path) => {
      const text = await Deno.readTextFile(join(image.rootfs, path));
      const field = (key: string) => text.match(new RegExp(`^${key}: (.*)$`, "m"))?.[1];
      return { name: field("Package")!, version: field("Version")!, arch: field("Architecture") };
    }));
    ok(entries.length > 0, "status.d has entries");
    const debian = sbom.components.filter((c) =>
      c.purl.startsWith("pkg:deb/") && c.purl.includes(`arch=${platform.arch}&`)
    );
    deepStrictEqual(
      debian.map((c) => `${c.name} ${c.version}`).sort(),
      entries.map((e) => `${e.name} ${e.version}`).sort(),
    );
    for (const entry of entries) strictEqual(entry.arch, platform.arch);
    // Scanners see the npm packages as installed package.json files: the SBOM's, no more, no less.
    const manifests = (await filesUnder(image.rootfs, join(NPM_ROOT.slice(1), "node_modules")))
      .filter((path) => path.endsWith("/package.json"));
    const installed = await Promise.all(manifests.map(async (path) => {
      const { name, version } = JSON.parse(await Deno.readTextFile(join(image.rootfs, path)));
      return `${name}@${version}`;
    }));
    deepStrictEqual(
      installed.sort(),
      npmComponents.map((c) => `${fullName(c)}@${c.version}`).sort(),
    );
    // Each library is byte for byte a file of a listed package (or of the cross package it is).
    const owned = new Map<string, string>();
    for (const component of debian) {
      const installedAs = component.properties?.find((p) => p.name === "debian:installed-as");
      const pkg = installedAs?.value.split(" ")[0] ?? component.name;
      for (const file of (await runCommand("dpkg-query", ["-L", pkg])).split("\n")) {
        const info = await Deno.stat(file).catch(() => undefined);
        if (info?.isFile) owned.set(await sha256(file), pkg);
      }
    }
    for (const library of libraries) {
      ok(owned.has(await sha256(join(image.rootfs, library))), `${library} is a listed package's`);
    }
  });
}

Deno.test("the kustomize bundle's base and example render the agent's image at the release's digest", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await runCommand("tar", [
      "-xzf",
      join(done.dir, `csi-node-provisioner-kustomize-${version}.tar.gz`),
      "-C",
      dir,
    ]);
    const { kubectl } = await ensureClusterBinaries();
    const top = join(dir, `csi-node-provisioner-kustomize-${version}`);
    for (const overlay of ["deploy", "examples/hostpath"]) {
      const objects = parseObjects(await run(kubectl, ["kustomize", join(top, overlay)]));
      const daemonSet = theObject(objects, "DaemonSet");
      const images = JSON.stringify(daemonSet).match(/"image":"([^"]+)"/g) ?? [];
      ok(
        images.some((image) => image.endsWith(`csi-node-provisioner@${done.image.indexDigest}"`)),
        `${overlay}: ${images.join(", ")}`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the macOS binaries are Mach-O executables for their architecture", async () => {
  const cpu = { amd64: 0x01000007, arm64: 0x0100000c };
  for (const [arch, type] of Object.entries(cpu)) {
    const file = await Deno.open(join(done.dir, `kubectl-csi_node_provisioner-darwin-${arch}`));
    const head = new Uint8Array(8);
    await file.read(head);
    file.close();
    const view = new DataView(head.buffer);
    strictEqual(view.getUint32(0, true), 0xfeedfacf, `${arch}: 64-bit Mach-O magic`);
    strictEqual(view.getUint32(4, true), type, `${arch}: CPU type`);
  }
});
