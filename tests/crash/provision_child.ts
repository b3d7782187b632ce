/**
 * The process the crash test kills: it provisions the claims of a durable
 * world (durable_world.ts) with the real controller and file journal. With
 * `--pause`, it prints `STEP <name>` at each step and waits for a line on
 * stdin before going on, so the parent can SIGKILL it at that step. Without,
 * it is the agent after the restart: it syncs every claim and every intent
 * until all are done, then prints `DONE` and exits 0. With
 * `--replace-every-write`, every journal write replaces the file instead of
 * appending to it.
 */
import { intentKey } from "../../lib/provision/intent/intent.ts";
import { openWorld } from "./durable_world.ts";

const [statePath, journalPath] = Deno.args;
const pausing = Deno.args.includes("--pause");
const replaceEveryWrite = Deno.args.includes("--replace-every-write");
const lines = (async function* () {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of Deno.stdin.readable) {
    buffer += decoder.decode(chunk);
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
    }
  }
})();
const encoder = new TextEncoder();
const pause = async (step: string) => {
  if (!pausing) return;
  await Deno.stdout.write(encoder.encode(`STEP ${step}\n`));
  await lines.next();
};

const world = await openWorld({ state: statePath!, journal: journalPath! }, pause, {
  replaceEveryWrite,
});
const signal = new AbortController().signal;
for (let round = 0; round < 10; round++) {
  const keys = new Set([...world.keys(), ...world.journal.entries().map(intentKey)]);
  const outcomes = [];
  for (const key of keys) outcomes.push(await world.controller.sync(key, signal));
  if (outcomes.every((outcome) => outcome.kind === "done") && world.journal.size === 0) break;
}
// As the agent does at shutdown: clears not yet on disk are written.
await world.journal.close();
await Deno.stdout.write(encoder.encode(`DONE ${world.journal.size}\n`));
Deno.exit(0);
