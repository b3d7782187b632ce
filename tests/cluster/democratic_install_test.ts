import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { democraticArgs, democraticConfig } from "./democratic.ts";
import { checkPrograms, democraticDir, ensureDemocratic } from "./democratic_install.ts";
import { DEMOCRATIC_ARCHIVE, PeerArchiveError } from "./peers.ts";

async function withTempDir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "democratic-test-" });
  try {
    return await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** An environment whose archive directory and cache are `dir`'s. */
function envIn(dir: string): Record<string, string | undefined> {
  return { CSI_PEERS_DIR: dir, XDG_CACHE_HOME: join(dir, "cache"), PATH: Deno.env.get("PATH") };
}

Deno.test("democratic-csi: a missing archive is one error naming it, the pinned sha256 and what to do", async () => {
  await withTempDir(async (dir) => {
    const lines: string[] = [];
    const error = await ensureDemocratic({ env: envIn(dir), log: (line) => lines.push(line) })
      .catch((e) => e);
    assert.ok(error instanceof PeerArchiveError, String(error));
    assert.match(
      error.message,
      new RegExp(`${dir}/democratic-csi-1\\.9\\.0\\.tar\\.gz is missing`),
    );
    assert.match(error.message, new RegExp(DEMOCRATIC_ARCHIVE.sha256));
    assert.match(error.message, /CSI_PEERS_DIR/);
    assert.deepEqual(lines, []);
    assert.equal(existsSync(join(dir, "cache")), false, "nothing written to the cache");
  });
});

Deno.test("democratic-csi: an altered archive is refused with both sha256s, and npm is not run", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, DEMOCRATIC_ARCHIVE.file), "not the archive");
    const lines: string[] = [];
    const error = await ensureDemocratic({ env: envIn(dir), log: (line) => lines.push(line) })
      .catch((e) => e);
    assert.ok(error instanceof PeerArchiveError, String(error));
    assert.match(error.message, /has sha256 [0-9a-f]{64}, not the pinned 6b57db16/);
    assert.match(error.message, /altered or another version/);
    assert.deepEqual(lines, []);
    assert.equal(existsSync(join(dir, "cache")), false, "nothing written to the cache");
  });
});

Deno.test("democratic-csi is cached by the archive's sha256", () => {
  assert.equal(
    democraticDir({ XDG_CACHE_HOME: "/x" }),
    "/x/csi-node-provisioner/democratic-6b57db169aae187f",
  );
});

Deno.test("democratic-csi: the programs it runs are checked, all missing ones in one error", () => {
  assert.throws(
    () => checkPrograms({ PATH: "/nonexistent" }),
    /needs node, npm, df, du, rsync on PATH/,
  );
});

Deno.test("democratic-csi config and command line: its volumes under the node's dir, both services", () => {
  assert.deepEqual(load(democraticConfig("/c/nodes/node-a/state")), {
    driver: "local-hostpath",
    "local-hostpath": {
      shareBasePath: "/c/nodes/node-a/state",
      controllerBasePath: "/c/nodes/node-a/state",
      dirPermissionsMode: "0777",
      dirPermissionsUser: 0,
      dirPermissionsGroup: 0,
    },
  });
  assert.deepEqual(democraticArgs({ configFile: "/c/d.yaml", socket: "/c/csi.sock" }), [
    "--csi-version=1.5.0",
    "--csi-name=org.democratic-csi.local-hostpath",
    "--driver-config-file=/c/d.yaml",
    "--log-level=info",
    "--csi-mode=node",
    "--csi-mode=controller",
    "--server-socket=/c/csi.sock",
  ]);
});

// On a fresh machine the first call installs (tests/prepare.ts does it before the tests).
Deno.test("democratic-csi installed: version 1.9.0 with its dependencies; a second call installs nothing", async () => {
  const first = await ensureDemocratic();
  const lines: string[] = [];
  const started = performance.now();
  assert.deepEqual(await ensureDemocratic({ log: (line) => lines.push(line) }), first);
  assert.deepEqual(lines, []);
  assert.ok(performance.now() - started < 1_000);
  const manifest = JSON.parse(await Deno.readTextFile(join(first.dir, "package.json")));
  assert.equal(manifest.version, "1.9.0");
  assert.ok(existsSync(join(first.dir, "node_modules", "@grpc", "grpc-js")));
  assert.ok(!existsSync(join(first.dir, "node_modules", "eslint")), "no dev dependencies");
});
