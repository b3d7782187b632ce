/**
 * `deno task compile`: the agent as one executable per platform, with
 * `bun build --compile`. The commit is compiled in (`--version` prints it).
 *
 *   deno task compile                  dist/csi-node-provisioner (this machine's platform)
 *   deno task compile --platform=arm64 dist/csi-node-provisioner-linux-arm64 on an x64 machine
 *   deno task compile --platform=all   linux/amd64 and linux/arm64
 */

import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { join } from "node:path";
import { REPO_ROOT } from "./build_info.ts";
import { currentCommit } from "./build_info.ts";
import { bunCacheDir, bunVersion, checkBunRuntime } from "./bun_runtimes.ts";
import { runCommand } from "./command.ts";
import { binaryPath, hostPlatform, type Platform, PLATFORMS } from "./platforms.ts";

/**
 * Scales JavaScriptCore's tier-up thresholds: a function is compiled by the
 * baseline, DFG and FTL JITs only after that many times more calls and loop
 * iterations (Bun.unsafe.setJITPolicy). The agent's work comes a claim at a
 * time, and at the default thresholds much of what the JIT's threads
 * compiled did not pay for itself: 256 lowered CPU per claim, peak RSS and
 * start-up CPU, and higher factors stopped gaining (the A/B is in
 * bench/README.md, "Kept: JavaScriptCore's JIT tiers up 256 times later").
 */
const JIT_POLICY = 256;

/**
 * The order in which the agent first runs its functions, recorded from a
 * start of the agent on a test cluster (start-up, claims provisioned and
 * deleted, shutdown) by `deno task bytecode-order` (bench/bytecode_order.ts,
 * through tests/deploy/bytecode_recording.ts). `--bytecode-order` lays the
 * executable's bytecode out in that order, so a start pages in the bytecode
 * it runs and little beside it: a lower idle RSS, from fewer of the
 * executable's pages, with no change in CPU (the A/B is in bench/README.md).
 * Its entries are hashes of functions, so an order recorded from an older
 * tree still places every function that has not changed since; an entry no
 * function matches places nothing (tests/e2e/bytecode_order_test.ts checks
 * that it still names the functions the binary loads and runs).
 */
export const BYTECODE_ORDER_FILE = "deploy/image/bytecode.order";

/**
 * The entries of an order file, which Bun writes as "v2" and then one line
 * per function or module: a letter for its kind and a hash of it.
 */
export function orderEntries(text: string): string[] {
  const lines = text.split("\n").filter((line) => line !== "");
  if (lines[0] !== "v2") throw new Error(`not a bytecode order file (first line ${lines[0]})`);
  const entries = lines.slice(1);
  const malformed = entries.find((line) => !/^[A-Z] [0-9a-f]{16}$/.test(line));
  if (malformed !== undefined) throw new Error(`unexpected bytecode order line: ${malformed}`);
  return entries;
}

/**
 * The flags of every build. --bytecode makes the executable larger but
 * about halves the time to the first line of output. --format=esm with
 * --splitting puts what the agent imports lazily (@kubernetes/client-node
 * for exec-plugin kubeconfigs, js-yaml) in chunks of their own inside the
 * executable, loaded when first imported; as one CommonJS bundle, all of its
 * bytecode was loaded, and its CPU spent, at every start.
 * A compiled Bun program would otherwise read .env and bunfig.toml from its
 * working directory at start-up; the agent takes its settings from flags and
 * its pod's environment only.
 */
export function bunBuildArgs(
  platform: Pick<Platform, "bunTarget">,
  options: {
    commit: string;
    entry?: string;
    outfile: string;
    bytecodeOrder?: string;
    metafile?: string;
  },
): string[] {
  return [
    "build",
    "--compile",
    "--minify",
    "--bytecode",
    ...(options.bytecodeOrder === undefined ? [] : [`--bytecode-order=${options.bytecodeOrder}`]),
    "--format=esm",
    "--splitting",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    `--compile-jit-policy=${JIT_POLICY}`,
    ...(options.metafile === undefined ? [] : [`--metafile=${options.metafile}`]),
    `--target=${platform.bunTarget}`,
    `--define=CSI_NODE_PROVISIONER_COMMIT=${JSON.stringify(options.commit)}`,
    // An ESM bundle spells out each CommonJS module's __dirname as the absolute path it was
    // built from (grpc-js's channelz and orca read it); the executable's own value keeps the build
    // reproducible from any checkout and the builder's paths out of the binary.
    `--define=__dirname=${JSON.stringify("/$bunfs/root")}`,
    options.entry ?? "main.ts",
    "--outfile",
    options.outfile,
  ];
}

/**
 * Where Bun writes the build's metafile next to a binary: the modules it
 * bundled, which the release's SBOM lists.
 */
export function metafilePath(binary: string): string {
  return `${binary}.meta.json`;
}

/** Compiles the agent for the platform; resolves to the binary's absolute path. */
export async function compileAgent(
  platform: Platform,
  options: { commit?: string; root?: string } = {},
): Promise<string> {
  const root = options.root ?? REPO_ROOT;
  return await compileTo(platform, join(root, binaryPath(platform)), options);
}

/**
 * Compiles the agent for a Bun target into `outfile`, with its metafile
 * beside it (metafilePath).
 */
export async function compileTo(
  target: Pick<Platform, "bunTarget">,
  outfile: string,
  options: { commit?: string; root?: string } = {},
): Promise<string> {
  const root = options.root ?? REPO_ROOT;
  const commit = options.commit ?? await currentCommit(Deno.env.toObject(), root);
  const bytecodeOrder = join(root, BYTECODE_ORDER_FILE);
  if (!existsSync(bytecodeOrder)) {
    throw new Error(`${BYTECODE_ORDER_FILE} is missing: record it with deno task bytecode-order`);
  }
  const args = bunBuildArgs(target, {
    commit,
    bytecodeOrder,
    outfile,
    metafile: metafilePath(outfile),
  });
  await runCommand(join(root, "node_modules/.bin/bun"), args, {
    cwd: root,
    inherit: true,
  }).catch((error: Error) => {
    throw new Error(
      `cannot compile for ${target.bunTarget}: ${error.message}\n` +
        `(Bun fetches another platform's runtime from the npm registry as @oven/bun-*)`,
    );
  });
  checkBunRuntime(target.bunTarget, await bunVersion(root), bunCacheDir(Deno.env.toObject()));
  return outfile;
}

export function platformsNamed(name: string): Platform[] {
  if (name === "all") return [...PLATFORMS];
  const platform = PLATFORMS.find((candidate) => candidate.arch === name);
  if (platform === undefined) {
    throw new Error(`unknown platform ${name}: amd64, arm64 or all`);
  }
  return [platform];
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { platform: { type: "string", default: hostPlatform().arch } },
  });
  for (const platform of platformsNamed(values.platform!)) await compileAgent(platform);
}
