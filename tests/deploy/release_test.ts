/**
 * Release hygiene. One version, package.json's: every file that repeats it
 * agrees, and so does what users get from them (the image the chart and the
 * kustomize base deploy, the chart's version, the binary's --version, the
 * image task's tag). The LICENSE is the license package.json names, and
 * SECURITY.md covers everything deploy/rbac.yaml lets the agent touch.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { readBuildInfo } from "../../deploy/image/build_info.ts";
import { archivePath } from "../../deploy/image/main.ts";
import { readVersions, VERSION_SITES, withVersion } from "../../deploy/image/version.ts";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import {
  agentContainer,
  CHART_DIR,
  parseObjects,
  RBAC_FILE,
  renderHelm,
  renderKustomize,
  rulesOf,
  run,
  theObject,
} from "./render.ts";

const packageVersion = async () =>
  (JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "package.json"))) as { version: string })
    .version;

Deno.test("every file that states the version states package.json's", async () => {
  const version = await packageVersion();
  for (const { site, versions } of await readVersions()) {
    ok(versions.length > 0, `${site.file}: no version found by ${site.pattern}`);
    deepStrictEqual(new Set(versions), new Set([version]), `${site.file} (${site.pattern})`);
  }
});

Deno.test("setting a version changes every place, and nothing else", async () => {
  const dir = mkdtempSync(join(tmpdir(), "versions-"));
  try {
    for (const file of new Set(VERSION_SITES.map((site) => site.file))) {
      Deno.mkdirSync(join(dir, dirname(file)), { recursive: true });
      cpSync(join(REPO_ROOT, file), join(dir, file));
    }
    const before = await Deno.readTextFile(join(dir, "package-lock.json"));
    for (const site of VERSION_SITES) {
      const path = join(dir, site.file);
      await Deno.writeTextFile(path, withVersion(site, await Deno.readTextFile(path), "9.8.7"));
    }
    for (const { site, versions } of await readVersions(dir)) {
      deepStrictEqual(new Set(versions), new Set(["9.8.7"]), site.file);
    }
    // The lock file's dependencies keep their own versions.
    const after = await Deno.readTextFile(join(dir, "package-lock.json"));
    strictEqual(after.split("\n").length, before.split("\n").length);
    strictEqual(
      after.split("\n").filter((line, index) => line !== before.split("\n")[index]).length,
      2,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("the chart, the kustomize base, the binary and the image task all use package.json's version", async () => {
  const version = await packageVersion();
  const binaries = await ensureClusterBinaries();
  const helm = await ensureHelm();
  const chart = await renderHelm(helm);
  strictEqual(
    agentContainer(theObject(chart.objects, "DaemonSet")).image,
    `csi-node-provisioner:${version}`,
  );
  const metadata = await run(helm, ["show", "chart", CHART_DIR]);
  ok(metadata.includes(`\nversion: ${version}\n`), metadata);
  ok(metadata.includes(`\nappVersion: ${version}\n`), metadata);
  const base = await renderKustomize(binaries.kubectl);
  strictEqual(
    agentContainer(theObject(base.objects, "DaemonSet")).image,
    `csi-node-provisioner:${version}`,
  );
  const binary = await run(join(REPO_ROOT, "dist/csi-node-provisioner"), ["--version"]);
  ok(binary.startsWith(`csi-node-provisioner ${version} (commit `), binary);
  const info = await readBuildInfo();
  strictEqual(info.version, version);
  ok(archivePath(info.version).endsWith(`dist/csi-node-provisioner-${version}.oci.tar`));
});

/** sha256 of the Apache License 2.0 as the ASF publishes it (LICENSE-2.0.txt). */
const APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30";

Deno.test("LICENSE is the full Apache-2.0 text that package.json names", async () => {
  const manifest = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "package.json")));
  strictEqual(manifest.license, "Apache-2.0");
  const text = await Deno.readFile(join(REPO_ROOT, "LICENSE"));
  strictEqual(createHash("sha256").update(text).digest("hex"), APACHE_2_0_SHA256);
});

Deno.test("SECURITY.md names every resource deploy/rbac.yaml grants", async () => {
  const security = (await Deno.readTextFile(join(REPO_ROOT, "SECURITY.md"))).toLowerCase();
  const roles = parseObjects(await Deno.readTextFile(RBAC_FILE))
    .filter((object) => object.kind === "ClusterRole" || object.kind === "Role");
  const resources = new Set(roles.flatMap(rulesOf).flatMap((rule) => rule.resources));
  ok(resources.size >= 8, [...resources].join(", "));
  for (const resource of resources) {
    const singular = resource.replace(/ies$/, "y").replace(/(ss)es$/, "$1").replace(/s$/, "");
    ok(security.includes(singular), `SECURITY.md does not mention ${resource}`);
  }
});
