/**
 * The journal protocol under SIGKILL, between every pair of its steps: a
 * process provisions a claim (tests/crash/provision_child.ts: the real
 * controller, PV saver and file journal over a world kept in a file) and is
 * killed at one step: after each step of writing the intent (its line
 * appended, fdatasynced; and in a second test, with every write replacing
 * the file: temporary file written, fsynced, renamed, directory fsynced),
 * after the driver made the volume, after the PV was saved, and after each
 * step of clearing the intent.
 * Then the claim is kept, or deleted and created again under the same name
 * (a new uid), and a fresh process recovers from the files alone. Whatever
 * the step: the claim has exactly one volume with a PV holding it, no volume
 * is left without a PV, and the journal ends empty.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseJournal } from "../../lib/journal/file/format.ts";
import { INTENT_JOURNAL_SHAPE } from "../../lib/provision/intent/intent.ts";
import { claim, CLAIM_UID } from "../builders/provision.ts";
import { readState, writeState } from "./durable_world.ts";

const CHILD = new URL("./provision_child.ts", import.meta.url).pathname;
const NEW_UID = "5e5e5e5e-0000-4000-8000-000000000002";

interface Run {
  steps: string[];
  killed: boolean;
  done: string | undefined;
}

/** Runs the child; with killAt, SIGKILLs it when it reaches that step (0-based). */
async function runChild(
  dir: string,
  options: { pause: boolean; killAt?: number; replaceEveryWrite: boolean },
): Promise<Run> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-check",
      CHILD,
      join(dir, "world.json"),
      join(dir, "journal.json"),
      ...(options.pause ? ["--pause"] : []),
      ...(options.replaceEveryWrite ? ["--replace-every-write"] : []),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const run: Run = { steps: [], killed: false, done: undefined };
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of child.stdout) {
    buffer += decoder.decode(chunk);
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.startsWith("DONE")) run.done = line;
      if (!line.startsWith("STEP ")) continue;
      run.steps.push(line.slice(5));
      if (run.steps.length - 1 === options.killAt) {
        child.kill("SIGKILL");
        run.killed = true;
      } else await writer.write(new TextEncoder().encode("\n"));
    }
  }
  await writer.close().catch(() => {});
  const status = await child.status;
  strictEqual(status.signal, run.killed ? "SIGKILL" : null, JSON.stringify(run));
  return run;
}

async function freshWorld(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "crash-"));
  writeState(join(dir, "world.json"), {
    claims: { "apps/data": claim() },
    volumes: {},
    pvs: {},
  });
  return dir;
}

/** Every claim has one volume and a PV holding it; every volume has its PV; the journal is empty. */
function checkWorld(dir: string, uids: { provisioned: string }, what: string): void {
  const state = readState(join(dir, "world.json"));
  const name = `pvc-${uids.provisioned}`;
  strictEqual(state.pvs[name]?.spec.csi?.volumeHandle, state.volumes[name], `${what}: ${name}`);
  strictEqual(state.pvs[name]?.spec.claimRef?.uid, uids.provisioned, what);
  for (const [volume, id] of Object.entries(state.volumes)) {
    strictEqual(state.pvs[volume]?.spec.csi?.volumeHandle, id, `${what}: volume ${volume} leaked`);
  }
  const journal = parseJournal(
    Deno.readTextFileSync(join(dir, "journal.json")),
    INTENT_JOURNAL_SHAPE,
  );
  deepStrictEqual([journal.entries, journal.problems], [[], []], `${what}: journal not empty`);
}

/** Kills the child after each step in turn, keeping or recreating the claim, and recovers. */
async function killedAtEveryStep(
  t: Deno.TestContext,
  journal: { replaceEveryWrite: boolean; writeSteps: string[] },
): Promise<void> {
  const { replaceEveryWrite } = journal;
  const reference = await freshWorld();
  const { steps } = await runChild(reference, { pause: true, replaceEveryWrite });
  const writeSteps = journal.writeSteps.map((step) => `journal-${step}`);
  deepStrictEqual(steps, [...writeSteps, "volume-created", "pv-saved", ...writeSteps]);
  checkWorld(reference, { provisioned: CLAIM_UID }, "no kill");
  const outcomes: string[] = [];
  for (const [index, step] of steps.entries()) {
    await t.step(`killed after step ${index + 1}, ${step}`, async () => {
      const kept = await freshWorld();
      const recreated = await freshWorld();
      await Promise.all(
        [kept, recreated].map((dir) =>
          runChild(dir, { pause: true, killAt: index, replaceEveryWrite })
        ),
      );
      const state = readState(join(recreated, "world.json"));
      state.claims["apps/data"] = claim({ metadata: { uid: NEW_UID } });
      writeState(join(recreated, "world.json"), state);
      const recovered = await Promise.all(
        [kept, recreated].map((dir) => runChild(dir, { pause: false, replaceEveryWrite })),
      );
      strictEqual(recovered.every((run) => run.done === "DONE 0"), true, JSON.stringify(recovered));
      checkWorld(kept, { provisioned: CLAIM_UID }, `claim kept, killed after ${step}`);
      checkWorld(recreated, { provisioned: NEW_UID }, `claim recreated, killed after ${step}`);
      const old = readState(join(recreated, "world.json")).volumes[`pvc-${CLAIM_UID}`];
      outcomes.push(
        `${step}: old claim's volume ${old === undefined ? "deleted" : "kept by its PV"}`,
      );
    });
  }
  console.log(
    `killed at ${steps.length} steps × 2 (claim kept, recreated):\n  ${outcomes.join("\n  ")}`,
  );
}

Deno.test("a process SIGKILLed between every pair of steps of the journal protocol: nothing leaks, the claim is provisioned", async (t) => {
  await killedAtEveryStep(t, { replaceEveryWrite: false, writeSteps: ["appended", "synced"] });
});

Deno.test("the same with every journal write replacing the file: nothing leaks, the claim is provisioned", async (t) => {
  await killedAtEveryStep(t, {
    replaceEveryWrite: true,
    writeSteps: ["tmp-written", "tmp-synced", "renamed", "dir-synced"],
  });
});
