import assert from "node:assert/strict";
import { join } from "node:path";
import {
  cacheDir,
  cacheKey,
  COMPONENTS,
  ensureClusterBinaries,
  findPrebuilt,
  pinnedVersions,
  TOOLS_DIR,
} from "./build.ts";
import { versionLdflags } from "./go_build.ts";

Deno.test("the cache key is the first 16 hex digits of sha256(go.sum)", () => {
  // sha256("") = e3b0c442 98fc1c14 9afbf4c8 ...
  assert.equal(cacheKey(""), "e3b0c44298fc1c14");
});

Deno.test("the cache lives under XDG_CACHE_HOME, else ~/.cache", () => {
  assert.equal(
    cacheDir("abc", { XDG_CACHE_HOME: "/x" }),
    "/x/csi-node-provisioner/cluster-bin-abc",
  );
  assert.equal(
    cacheDir("abc", { HOME: "/home/u" }),
    "/home/u/.cache/csi-node-provisioner/cluster-bin-abc",
  );
});

async function fakeBinDir(files: string[]): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "cluster-bin-test-" });
  for (const file of files) await Deno.writeTextFile(join(dir, file), "#!/bin/sh\n");
  return dir;
}

Deno.test("pre-built binaries: CLUSTER_BIN_DIR for all, KUBEBUILDER_ASSETS for envtest's three", async () => {
  const envtest = await fakeBinDir(["etcd", "kube-apiserver", "kubectl", "kube-scheduler"]);
  const own = await fakeBinDir(["kube-apiserver", "csi-provisioner"]);
  try {
    const found = findPrebuilt({ CLUSTER_BIN_DIR: own, KUBEBUILDER_ASSETS: envtest });
    assert.deepEqual(found, {
      kubeApiserver: join(own, "kube-apiserver"),
      csiProvisioner: join(own, "csi-provisioner"),
      etcd: join(envtest, "etcd"),
      kubectl: join(envtest, "kubectl"),
    });
  } finally {
    await Deno.remove(envtest, { recursive: true });
    await Deno.remove(own, { recursive: true });
  }
});

Deno.test("ensureClusterBinaries builds nothing when CLUSTER_BIN_DIR has everything", async () => {
  const dir = await fakeBinDir(COMPONENTS.map((component) => component.file));
  const lines: string[] = [];
  try {
    const binaries = await ensureClusterBinaries({
      env: { CLUSTER_BIN_DIR: dir, XDG_CACHE_HOME: "/nonexistent" },
      log: (line) => lines.push(line),
    });
    assert.equal(binaries.etcd, join(dir, "etcd"));
    assert.equal(binaries.csiProvisioner, join(dir, "csi-provisioner"));
    assert.deepEqual(lines, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("versions stamped into the binaries come from tools/go.mod", async () => {
  const versions = pinnedVersions(await Deno.readTextFile(join(TOOLS_DIR, "go.mod")));
  assert.match(versions.kubernetes, /^v1\.\d+\.\d+$/);
  assert.match(versions.provisioner ?? "", /^v6\.\d+\.\d+$/);
  const flags = versionLdflags({ kubernetes: "v1.36.3", provisioner: "v6.3.0" });
  assert.match(flags, /-X k8s\.io\/component-base\/version\.gitVersion=v1\.36\.3/);
  assert.match(flags, /-X k8s\.io\/component-base\/version\.gitMinor=36/);
  assert.match(flags, /-X main\.version=v6\.3\.0/);
});

Deno.test("a module without csi-provisioner stamps only the Kubernetes version", () => {
  const versions = pinnedVersions("module m\n\nrequire k8s.io/kubernetes v1.34.4\n");
  assert.deepEqual(versions, { kubernetes: "v1.34.4" });
  const flags = versionLdflags(versions);
  assert.match(flags, /-X k8s\.io\/client-go\/pkg\/version\.gitMinor=34/);
  assert.doesNotMatch(flags, /main\.version/);
  assert.throws(() => pinnedVersions("module m\n"), /does not require k8s\.io\/kubernetes/);
});

// On a fresh machine the first call builds (CI runs `deno task cluster:build` before the tests).
Deno.test("a second ensureClusterBinaries finds the cached binaries at once", async () => {
  const first = await ensureClusterBinaries();
  const started = performance.now();
  const lines: string[] = [];
  const second = await ensureClusterBinaries({ log: (line) => lines.push(line) });
  assert.deepEqual(second, first);
  assert.deepEqual(lines, []);
  assert.ok(performance.now() - started < 1_000);
  for (const path of Object.values(second)) {
    assert.ok((await Deno.stat(path)).mode! & 0o111, `${path} is executable`);
  }
});
