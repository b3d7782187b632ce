/**
 * deploy/image/bytecode.order against the compiled binary: the order is
 * recorded once (`deno task bytecode-order`) and committed, and each build
 * lays its bytecode out by it (deploy/image/compile.ts). Its entries are
 * hashes of functions, so it goes stale as the code changes, and wholly with
 * a Bun that hashes differently; a stale order costs RSS on every node, not
 * correctness, and is seen only here. Two runs are checked: `--version`,
 * which loads every module, and a deployed agent's start and claims, which
 * run the functions loading does not (flags, informers, controllers, CSI).
 */
import { ok } from "node:assert/strict";
import { join } from "node:path";
import { BYTECODE_ORDER_FILE, orderEntries } from "../../deploy/image/compile.ts";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { recordBytecodeOrder } from "../deploy/bytecode_recording.ts";
import { BINARY, requireBinary } from "./agent_process.ts";

/**
 * Below this share the order no longer lays out what a start runs. A fresh
 * recording, or one a few commits old, names nearly everything `--version`
 * loads and a deployed agent runs; an order without its `S` entries names
 * only about half, so the bound tells the two apart.
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

/** Fails when the committed order names under MIN_SHARE_NAMED of what `run` recorded. */
async function assertNamesWhatRuns(
  what: string,
  run: (dir: string) => Promise<string[]>,
): Promise<void> {
  requireBinary();
  const committedText = await Deno.readTextFile(join(REPO_ROOT, BYTECODE_ORDER_FILE));
  const committed = new Set(orderEntries(committedText).map(hashOf));
  const dir = await Deno.makeTempDir({ prefix: "bytecode-order-test-" });
  try {
    const recorded = await run(dir);
    ok(recorded.length > 1000, `${what} ran only ${recorded.length} functions and modules`);
    const named = recorded.filter((entry) => committed.has(hashOf(entry))).length;
    const share = named / recorded.length;
    ok(
      share >= MIN_SHARE_NAMED,
      `${BYTECODE_ORDER_FILE} names ${named} of the ${recorded.length} functions and modules ` +
        `${what} ran (${(share * 100).toFixed(1)}%): record it again with ` +
        "deno task bytecode-order, then deno task compile",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("the committed bytecode order names the functions the compiled binary loads", async () => {
  await assertNamesWhatRuns("--version", loadedByVersion);
});

Deno.test("the committed bytecode order names the functions a deployed agent runs through claims", async () => {
  await assertNamesWhatRuns(
    "a start with the DaemonSet's flags and 20 claims",
    (dir) =>
      recordBytecodeOrder(
        { binary: BINARY, orderOut: join(dir, "claims.order"), deletesVolumes: true },
        () => {},
      ),
  );
});
