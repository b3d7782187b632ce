/**
 * `--journal-dump` prints the live entries of a journal file, the log's
 * clears applied, and exits 1 when the file is missing or unreadable.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dumpJournal } from "./dump.ts";

interface Entry {
  key: string;
}

async function dump(text: string | undefined) {
  const path = join(await mkdtemp(join(tmpdir(), "journal-dump-")), "journal.json");
  if (text !== undefined) await writeFile(path, text);
  const out: string[] = [];
  const err: string[] = [];
  const code = await dumpJournal<Entry>(path, {
    keyOf: (entry) => entry.key,
    validate: (raw) => typeof (raw as Entry).key === "string" ? raw as Entry : "no key",
    stdout: (line) => out.push(line),
    stderr: (line) => err.push(line),
  });
  return { code, out: out.join(""), err: err.join(""), path };
}

const HEADER = '{"kind":"csi-node-provisioner-journal","version":2}\n';

Deno.test("the dump prints the live entries, with the clears of the log applied", async () => {
  const { code, out, path } = await dump(
    `${HEADER}{"put":{"key":"a"}}\n{"put":{"key":"b"}}\n{"clear":"a"}\n`,
  );
  strictEqual(code, 0);
  deepStrictEqual(JSON.parse(out), { path, entries: [{ key: "b" }], problems: [] });
});

Deno.test("the dump of a missing or unreadable journal exits 1 and says why", async () => {
  const missing = await dump(undefined);
  strictEqual(missing.code, 1);
  ok(missing.err.includes("cannot read the intent journal"), missing.err);
  const garbage = await dump("garbage");
  strictEqual(garbage.code, 1);
  ok(garbage.err.includes("is unreadable"), garbage.err);
});
