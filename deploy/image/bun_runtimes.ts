/**
 * The Bun runtimes that `bun build --compile --target` puts into a binary
 * for another platform. Bun fetches them from the npm registry into its
 * install cache; nothing pins them the way package-lock.json pins the Bun
 * that builds, so each one's sha256 is pinned here, per Bun version, and a
 * build whose runtime differs, or whose Bun has no pins, fails.
 */

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { runCommand } from "./command.ts";

/** sha256 of the runtime file per Bun version and `--target`. */
export const BUN_RUNTIME_SHA256: Record<string, Record<string, string>> = {
  "1.4.5": {
    "bun-linux-x64-baseline": "f05d28a3862f4b84395c7fa32480b835dd47482e80b7e7a49a115227f0c06083",
    "bun-linux-arm64": "04778f1f42399a69d086853e9c7af4acf574b2f21a43d0dc673853d8b84a2923",
    "bun-darwin-x64": "88f97645b270aef20f9f9442f1658461cab3e7128e658af4615144e3396f084a",
    "bun-darwin-arm64": "e2984124f1514e1e6bbda20adedbf07a02c443c6a5828853a15c7c7abf78e19f",
  },
};

/** Bun's install cache, as Bun finds it. */
export function bunCacheDir(env: Record<string, string | undefined>): string {
  if (env.BUN_INSTALL_CACHE_DIR) return env.BUN_INSTALL_CACHE_DIR;
  return join(env.BUN_INSTALL ?? join(env.HOME ?? homedir(), ".bun"), "install", "cache");
}

/** The cache's file name of a target's runtime: Bun names arm64 aarch64 there. */
export function runtimeFileName(target: string, version: string): string {
  return `${target.replace(/-arm64\b/, "-aarch64")}-v${version}`;
}

/**
 * Checks the runtime Bun used for `target`; throws, saying what to do,
 * when it is not pinned, missing or not the pinned one.
 */
export function checkBunRuntime(
  target: string,
  version: string,
  cacheDir: string,
  pins: Record<string, Record<string, string>> = BUN_RUNTIME_SHA256,
): void {
  const expected = pins[version]?.[target];
  const path = join(cacheDir, runtimeFileName(target, version));
  if (expected === undefined) {
    throw new Error(
      `no sha256 pinned for Bun ${version}'s ${target} runtime: check ${path} and add it to ` +
        "deploy/image/bun_runtimes.ts",
    );
  }
  let actual: string;
  try {
    actual = createHash("sha256").update(readFileSync(path)).digest("hex");
  } catch (error) {
    throw new Error(`Bun's ${target} runtime is not at ${path}: ${(error as Error).message}`);
  }
  if (actual !== expected) {
    throw new Error(
      `Bun's ${target} runtime ${path} has sha256 ${actual}, not the pinned ${expected}`,
    );
  }
}

/** Bun's version: the npm package's, which must be what its executable reports. */
export async function bunVersion(root: string): Promise<string> {
  const { version } = JSON.parse(
    await Deno.readTextFile(join(root, "node_modules/bun/package.json")),
  ) as { version: string };
  const reported = (await runCommand(join(root, "node_modules/.bin/bun"), ["--version"])).trim();
  if (reported !== version) {
    throw new Error(`node_modules/bun is ${version} but its executable says ${reported}`);
  }
  return version;
}
