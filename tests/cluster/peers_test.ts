import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import {
  HOSTPATH_DRIVER_NAME,
  hostpathArgs,
  hostpathCsiDriver,
  hostpathStorageClass,
} from "./hostpath.ts";
import {
  ensurePeerBinaries,
  extract,
  HOSTPATH_ARCHIVE,
  HOSTPATH_DEPLOY_ARCHIVE,
  mainCheckout,
  PeerArchiveError,
  peerCacheDir,
  peerLdflags,
  peersDir,
  SNAPSHOTTER_ARCHIVE,
  verifiedArchive,
} from "./peers.ts";

async function withTempDir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "peers-test-" });
  try {
    return await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a missing archive is one error naming the file, the pinned sha256 and what to do", async () => {
  await withTempDir(async (dir) => {
    const error = await verifiedArchive(dir, HOSTPATH_ARCHIVE).catch((e) => e);
    assert.ok(error instanceof PeerArchiveError);
    assert.match(error.message, new RegExp(`${dir}/csi-driver-host-path-v1\\.18\\.0\\.tar\\.gz`));
    assert.match(error.message, /is missing/);
    assert.match(error.message, new RegExp(HOSTPATH_ARCHIVE.sha256));
    assert.match(error.message, /CSI_PEERS_DIR/);
  });
});

Deno.test("an altered archive is refused with both sha256s, and nothing is built", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, SNAPSHOTTER_ARCHIVE.file), "not the archive");
    const cache = join(dir, "cache");
    const lines: string[] = [];
    const error = await ensurePeerBinaries({
      hostpath: false,
      env: { CSI_PEERS_DIR: dir, XDG_CACHE_HOME: cache, GO: "/nonexistent/go" },
      log: (line) => lines.push(line),
    }).catch((e) => e);
    assert.ok(error instanceof PeerArchiveError, String(error));
    // sha256("not the archive")
    assert.match(error.message, /has sha256 [0-9a-f]{64}, not the pinned 691660b4/);
    assert.match(error.message, /altered or another version/);
    assert.deepEqual(lines, []);
    assert.equal(existsSync(cache), false, "nothing written to the cache");
  });
});

Deno.test("the archives are found beside the main checkout, or in CSI_PEERS_DIR", async () => {
  await withTempDir(async (dir) => {
    const worktree = join(dir, "wt", "peers");
    await Deno.mkdir(worktree, { recursive: true });
    await Deno.writeTextFile(
      join(worktree, ".git"),
      `gitdir: ${dir}/main/.git/worktrees/peers\n`,
    );
    assert.equal(mainCheckout(worktree), join(dir, "main"));
    assert.equal(peersDir({}, worktree), join(dir, "shared", "peers"));
    await Deno.mkdir(join(dir, "main", ".git"), { recursive: true });
    assert.equal(peersDir({}, join(dir, "main")), join(dir, "shared", "peers"));
    assert.equal(peersDir({ CSI_PEERS_DIR: "/elsewhere" }, worktree), "/elsewhere");
  });
});

Deno.test("peer binaries are cached by the archive's sha256 and stamped with the tag", () => {
  assert.equal(
    peerCacheDir("hostpath", HOSTPATH_ARCHIVE, { XDG_CACHE_HOME: "/x" }),
    "/x/csi-node-provisioner/hostpath-82df90bfe34e0640",
  );
  assert.equal(peerLdflags(SNAPSHOTTER_ARCHIVE), "-s -w -X main.version=v8.6.0");
});

async function version(binary: string): Promise<string> {
  const output = await new Deno.Command(binary, { args: ["--version"], stdin: "null" }).output();
  return new TextDecoder().decode(output.stdout).trim();
}

// On a fresh machine the first call builds (tests/prepare.ts does it before the tests).
Deno.test("the built peers report their versions; a second call builds nothing", async () => {
  const first = await ensurePeerBinaries();
  const lines: string[] = [];
  const started = performance.now();
  assert.deepEqual(await ensurePeerBinaries({ log: (line) => lines.push(line) }), first);
  assert.deepEqual(lines, []);
  assert.ok(performance.now() - started < 1_000);
  assert.match(await version(first.hostpathplugin!), /^hostpathplugin v1\.18\.0$/);
  assert.match(await version(first.csiSnapshotter!), /csi-snapshotter v8\.6\.0$/);
  assert.match(await version(first.snapshotController!), /snapshot-controller v8\.6\.0$/);
});

/** The objects of upstream's deploy/kubernetes-distributed/hostpath/, from the verified archive. */
async function upstreamManifests(): Promise<Record<string, Record<string, unknown>>> {
  const archive = await verifiedArchive(peersDir(Deno.env.toObject()), HOSTPATH_DEPLOY_ARCHIVE);
  return await withTempDir(async (dir) => {
    await extract(archive, dir);
    const hostpathDir = join(
      dir,
      HOSTPATH_DEPLOY_ARCHIVE.topDir,
      "deploy/kubernetes-distributed/hostpath",
    );
    const objects: Record<string, Record<string, unknown>> = {};
    for (const entry of Deno.readDirSync(hostpathDir)) {
      const text = await Deno.readTextFile(join(hostpathDir, entry.name));
      for (const object of loadAll(text) as Record<string, unknown>[]) {
        const metadata = object.metadata as { name: string };
        objects[`${object.kind}/${metadata.name}`] = object;
      }
    }
    return objects;
  });
}

Deno.test("the CSIDriver, classes and driver flags are upstream's distributed deployment's", async () => {
  const upstream = await upstreamManifests();
  assert.deepEqual(hostpathCsiDriver(), upstream[`CSIDriver/${HOSTPATH_DRIVER_NAME}`]);
  for (const kind of ["fast", "slow"]) {
    assert.deepEqual(hostpathStorageClass(kind), upstream[`StorageClass/csi-hostpath-${kind}`]);
  }
  const daemonSet = upstream["DaemonSet/csi-hostpathplugin"] as {
    spec: { template: { spec: { containers: { name: string; args: string[] }[] } } };
  };
  const container = daemonSet.spec.template.spec.containers.find((c) => c.name === "hostpath")!;
  // Upstream's, with the pod's variables filled in, the test's pools, and a state dir (upstream
  // mounts one at the default --statedir). --v=5 would log requests with their secrets.
  const expected = container.args
    .map((arg) => arg.replace("$(CSI_ENDPOINT)", "unix:///s/csi.sock"))
    .map((arg) => arg.replace("$(KUBE_NODE_NAME)", "node-a"))
    .map((arg) => (arg === "--v=5" ? "--v=4" : arg));
  assert.deepEqual(
    hostpathArgs({
      endpoint: "unix:///s/csi.sock",
      node: "node-a",
      stateDir: "/s/state",
      capacity: { slow: "10Gi", fast: "100Gi" },
    }),
    [...expected, "--statedir=/s/state"],
  );
});
