/**
 * deploy/image/bytecode.order against the compiled binary: the order is
 * recorded once (`deno task bytecode-order`) and committed, and each build
 * lays its bytecode out by it (deploy/image/compile.ts). Its entries are
 * hashes of functions, so it goes stale as the code changes, and wholly with
 * a Bun that hashes differently; a stale order costs RSS on every node, not
 * correctness, and is seen only here.
 */
import { ok } from "node:assert/strict";
import { join } from "node:path";
import { BYTECODE_ORDER_FILE, orderEntries } from "../../deploy/image/compile.ts";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { BINARY, requireBinary } from "./agent_process.ts";

/**
 * Below this share the order no longer lays out what a start runs. Freshly
 * recorded it names 99.8% of them, and 98.5% of a binary built a few commits
 * earlier.
 */
const MIN_SHARE_NAMED = 0.9;

/**
 * An entry's hash: the letter before it, the kind, can differ between two
 * runs for the same function (Bun records whichever of its forms ran first).
 */
const hashOf = (entry: string): string => entry.slice(2);

/** The functions and modules a run of `--version` loads, as Bun records them. */
async function loadedByVersion(dir: string): Promise<string[]> {
  const orderOut = join(dir, "version.order");
  const run = await new Deno.Command(BINARY, {
    args: ["--version"],
    env: { BUN_BYTECODE_ORDER_OUT: orderOut },
    clearEnv: true,
    stdout: "null",
    stdin: "null",
  }).output();
  ok(run.success, `${BINARY} --version failed`);
  return orderEntries(await Deno.readTextFile(orderOut));
}

Deno.test("the committed bytecode order names the functions the compiled binary loads", async () => {
  requireBinary();
  const committedText = await Deno.readTextFile(join(REPO_ROOT, BYTECODE_ORDER_FILE));
  const committed = new Set(orderEntries(committedText).map(hashOf));
  const dir = await Deno.makeTempDir({ prefix: "bytecode-order-test-" });
  try {
    const loaded = await loadedByVersion(dir);
    ok(loaded.length > 1000, `--version loaded only ${loaded.length} functions and modules`);
    const named = loaded.filter((entry) => committed.has(hashOf(entry))).length;
    const share = named / loaded.length;
    ok(
      share >= MIN_SHARE_NAMED,
      `${BYTECODE_ORDER_FILE} names ${named} of the ${loaded.length} functions and modules ` +
        `the binary loads (${(share * 100).toFixed(1)}%): record it again with ` +
        "deno task bytecode-order, then deno task compile",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
