import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { withTempDir } from "./test_support.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DENO = path.join(REPO_ROOT, "node_modules", ".bin", "deno");
const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));

function runMain(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(DENO, ["run", "-A", MAIN, ...args], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

Deno.test("bad flags exit 2 with one message listing every problem", () => {
  const { status, stderr } = runMain([
    "--node-id",
    "",
    "--capacity",
    "fast=10Qi",
    "--bogus=1",
    "--log-level=loud",
  ]);
  strictEqual(status, 2);
  const problems = stderr.split("\n").filter((line) => line.startsWith("  - "));
  deepStrictEqual(problems, [
    "  - unknown flag --bogus",
    '  - --log-level must be one of trace, debug, info, warn, error, fatal, silent; got "loud"',
    "  - an endpoint is required (--endpoint)",
    "  - a node id is required (--node-id)",
    '  - pool "fast": "10Qi" is not a size (examples: 10Gi, 500Mi, 1G, 1048576)',
  ]);
});

Deno.test("--help prints the usage on stdout and exits 0", () => {
  const { status, stdout } = runMain(["--help"]);
  strictEqual(status, 0);
  strictEqual(stdout.startsWith("Usage: csi-driver"), true, stdout);
});

Deno.test("a driver that cannot start exits 1 and says why", async () => {
  await withTempDir((dir) => {
    const file = path.join(dir, "csi.sock");
    fs.writeFileSync(file, "not a socket");
    const { status, stderr } = runMain([
      "--endpoint",
      file,
      "--node-id",
      "a",
      "--capacity",
      "fast=1Gi",
    ]);
    strictEqual(status, 1);
    strictEqual(stderr.includes("is not a socket"), true, stderr);
    return Promise.resolve();
  });
});
