import { deepStrictEqual, throws } from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bunCacheDir, checkBunRuntime, runtimeFileName } from "./bun_runtimes.ts";

const PIN = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"; // sha256("test")

Deno.test("checkBunRuntime: the pinned runtime passes; another, a missing one or no pin fails", () => {
  const dir = mkdtempSync(join(tmpdir(), "bun-cache-"));
  try {
    const pins = { "9.9.9": { "bun-darwin-arm64": PIN } };
    const file = join(dir, runtimeFileName("bun-darwin-arm64", "9.9.9"));
    throws(() => checkBunRuntime("bun-darwin-arm64", "9.9.9", dir, pins), /is not at .*aarch64/);
    writeFileSync(file, "test");
    checkBunRuntime("bun-darwin-arm64", "9.9.9", dir, pins);
    writeFileSync(file, "tampered");
    throws(
      () => checkBunRuntime("bun-darwin-arm64", "9.9.9", dir, pins),
      /has sha256 [0-9a-f]{64}, not the pinned 9f86d0/,
    );
    throws(() => checkBunRuntime("bun-darwin-x64", "9.9.9", dir, pins), /no sha256 pinned/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("bunCacheDir: BUN_INSTALL_CACHE_DIR, else BUN_INSTALL's, else the home's", () => {
  const cases: [Record<string, string>, string][] = [
    [{ BUN_INSTALL_CACHE_DIR: "/c", BUN_INSTALL: "/b", HOME: "/h" }, "/c"],
    [{ BUN_INSTALL: "/b", HOME: "/h" }, "/b/install/cache"],
    [{ HOME: "/h" }, "/h/.bun/install/cache"],
  ];
  deepStrictEqual(cases.map(([env]) => bunCacheDir(env)), cases.map(([, dir]) => dir));
});
