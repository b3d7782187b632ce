/**
 * The file journal on a real filesystem (a temporary directory): created
 * when missing, read back after a reopen, appended to and from time to time
 * replaced atomically, bounded, and an unreadable file set aside with one
 * Warning line while the agent goes on.
 */
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import {
  type FileJournalOptions,
  JournalFullError,
  openFileJournal,
  type WriteStep,
} from "./file_journal.ts";
import { parseJournal } from "./file/format.ts";
import { createJournalMetrics } from "./metrics.ts";
import { capturing } from "../../tests/fakes/logger.ts";
import { waitFor } from "../../tests/cluster/wait.ts";

interface Entry {
  key: string;
  since: string;
  value?: string;
}

function setUp(overrides: Partial<FileJournalOptions<Entry>> = {}) {
  const { logger, lines } = capturing(2);
  const registry = new Registry();
  const options: FileJournalOptions<Entry> = {
    keyOf: (entry) => entry.key,
    groupOf: (entry) => entry.value ?? "",
    sinceOf: (entry) => entry.since,
    validate: (raw) =>
      typeof raw === "object" && raw !== null && typeof (raw as Entry).key === "string"
        ? raw as Entry
        : `bad entry ${JSON.stringify(raw)}`,
    logger,
    metrics: createJournalMetrics(registry, { now: () => Date.parse("2026-01-01T01:00:00Z") }),
    ...overrides,
  };
  return { lines, registry, options };
}

async function tempPath(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), "journal-test-")), "sub", "journal.json");
}

const entry = (key: string, value = "v"): Entry => ({
  key,
  since: "2026-01-01T00:00:00.000Z",
  value,
});

Deno.test("a missing journal (and its directory) is created, empty", async () => {
  const path = await tempPath();
  const { options } = setUp();
  const journal = await openFileJournal(path, options);
  deepStrictEqual(journal.entries(), []);
  strictEqual(
    await readFile(path, "utf8"),
    '{"kind":"csi-node-provisioner-journal","version":2}\n',
  );
});

Deno.test("entries survive a reopen; cleared ones do not; the file is only ours to read", async () => {
  const path = await tempPath();
  const { options } = setUp();
  const journal = await openFileJournal(path, options);
  await journal.record(entry("a"));
  await journal.record(entry("b"));
  await journal.record(entry("a", "changed"));
  journal.clear("b", "pv_saved");
  await journal.close();
  const again = await openFileJournal(path, options);
  deepStrictEqual(again.entries(), [entry("a", "changed")]);
  strictEqual((await Deno.stat(path)).mode! & 0o777, 0o600);
  deepStrictEqual((await readdir(join(path, ".."))).sort(), ["journal.json"]);
});

Deno.test("entries are found by key and by group; a replaced or cleared entry leaves its group", async () => {
  const path = await tempPath();
  const { options } = setUp();
  const journal = await openFileJournal(path, options);
  await journal.record(entry("a", "claim-1"));
  await journal.record(entry("b", "claim-1"));
  await journal.record(entry("c", "claim-2"));
  deepStrictEqual(journal.entriesOf("claim-1"), [entry("a", "claim-1"), entry("b", "claim-1")]);
  deepStrictEqual(journal.get("c"), entry("c", "claim-2"));
  await journal.record(entry("a", "claim-2"));
  journal.clear("b", "pv_saved");
  deepStrictEqual(journal.entriesOf("claim-1"), []);
  deepStrictEqual(journal.entriesOf("claim-2"), [entry("c", "claim-2"), entry("a", "claim-2")]);
  strictEqual(journal.get("b"), undefined);
  strictEqual(journal.size, 2);
  await journal.close();
  const again = await openFileJournal(path, options);
  deepStrictEqual(again.entriesOf("claim-2").map((found) => found.key).sort(), ["a", "c"]);
});

Deno.test("changes made during a write are committed together by the next one", async () => {
  const path = await tempPath();
  let writes = 0;
  const { options } = setUp({ afterStep: (step) => void (isLastStep(step) && writes++) });
  const journal = await openFileJournal(path, options);
  writes = 0;
  await Promise.all(Array.from({ length: 50 }, (_, i) => journal.record(entry(`k${i}`))));
  ok(writes >= 1 && writes <= 3, `${writes} writes for 50 records`);
  strictEqual((await openFileJournal(path, options)).entries().length, 50);
  await journal.record(entry("k1"));
  ok(writes <= 3, "recording the same entry again writes nothing");
});

/** The last step of an append or of a replacement: one write done. */
function isLastStep(step: WriteStep): boolean {
  return step === "synced" || step === "dir-synced";
}

/** The keys of the entries in the journal file, as on disk now. */
async function keysOnDisk(path: string): Promise<string[]> {
  const { options } = setUp();
  const parsed = parseJournal(await readFile(path, "utf8"), options);
  deepStrictEqual(parsed.problems, []);
  return parsed.entries.map((entry) => entry.key);
}

Deno.test("a clear is written with the next record's write, not by a write of its own", async () => {
  const path = await tempPath();
  let writes = 0;
  const { options } = setUp({ afterStep: (step) => void (isLastStep(step) && writes++) });
  const journal = await openFileJournal(path, { ...options, clearDelayMs: 60_000 });
  await journal.record(entry("a"));
  writes = 0;
  journal.clear("a", "pv_saved");
  deepStrictEqual(journal.entries(), []);
  await new Promise((resolve) => setTimeout(resolve, 20));
  deepStrictEqual(await keysOnDisk(path), ["a"], "the clear alone wrote nothing");
  await journal.record(entry("b"));
  deepStrictEqual(await keysOnDisk(path), ["b"]);
  strictEqual(writes, 1, "one write for the clear and the record");
  await journal.close();
  strictEqual(writes, 1, "close has nothing left to write");
});

Deno.test("a clear with no record after it is written after the delay, or at close", async () => {
  const path = await tempPath();
  const { options } = setUp();
  const journal = await openFileJournal(path, { ...options, clearDelayMs: 10 });
  await journal.record(entry("a"));
  await journal.record(entry("b"));
  journal.clear("a", "pv_saved");
  await waitFor(async () => !(await keysOnDisk(path)).includes("a"), {
    description: "the clear on disk",
    timeoutMs: 1000,
    intervalMs: 10,
  });
  deepStrictEqual(await keysOnDisk(path), ["b"], "written after the delay");
  const closing = await openFileJournal(path, { ...options, clearDelayMs: 60_000 });
  closing.clear("b", "volume_deleted");
  await closing.close();
  deepStrictEqual(await keysOnDisk(path), [], "written at close");
  await journal.close();
});

Deno.test("close waits for the delayed write of a clear that is in flight", async () => {
  const path = await tempPath();
  let slow = false;
  const { options } = setUp({
    afterStep: (step) =>
      slow && step === "appended" ? new Promise((resolve) => setTimeout(resolve, 50)) : undefined,
  });
  const journal = await openFileJournal(path, { ...options, clearDelayMs: 0 });
  await journal.record(entry("a"));
  slow = true;
  journal.clear("a", "pv_saved");
  await new Promise((resolve) => setTimeout(resolve, 10));
  await journal.close();
  deepStrictEqual(await keysOnDisk(path), [], "on disk when close resolves");
});

Deno.test("an unreadable journal is set aside with one Warning naming both files; the agent goes on", async () => {
  const path = await tempPath();
  const { options, lines, registry } = setUp({ now: () => new Date("2026-02-03T04:05:06.789Z") });
  await openFileJournal(path, options);
  await writeFile(path, '{"kind":"csi-node-provisioner-journal","version":1,"entr');
  const journal = await openFileJournal(path, options);
  deepStrictEqual(journal.entries(), []);
  const aside = `${path}.corrupt-2026-02-03T04-05-06-789Z`;
  strictEqual(
    await readFile(aside, "utf8"),
    '{"kind":"csi-node-provisioner-journal","version":1,"entr',
  );
  const warnings = lines.filter((line) => line.includes("unreadable"));
  strictEqual(warnings.length, 1);
  ok(warnings[0]!.includes(path) && warnings[0]!.includes(aside), warnings[0]!);
  ok((await registry.metrics()).includes("csi_node_provisioner_journal_set_aside_total 1"));
  await journal.record(entry("after"));
  deepStrictEqual((await openFileJournal(path, options)).entries(), [entry("after")]);
});

Deno.test("a journal with some bad entries keeps the good ones and sets the file aside", async () => {
  const path = await tempPath();
  const { options } = setUp();
  await openFileJournal(path, options);
  await writeFile(
    path,
    JSON.stringify({
      kind: "csi-node-provisioner-journal",
      version: 1,
      entries: [entry("good"), { nope: 1 }],
    }),
  );
  const journal = await openFileJournal(path, options);
  deepStrictEqual(journal.entries(), [entry("good")]);
  const names = await readdir(join(path, ".."));
  strictEqual(names.filter((name) => name.includes(".corrupt-")).length, 1);
  deepStrictEqual((await openFileJournal(path, options)).entries(), [entry("good")]);
});

Deno.test("a journal of another version is set aside, not misread", async () => {
  const path = await tempPath();
  const { options } = setUp();
  await openFileJournal(path, options);
  await writeFile(
    path,
    '{"kind":"csi-node-provisioner-journal","version":3}\n{"put":{"key":"a"}}\n',
  );
  deepStrictEqual((await openFileJournal(path, options)).entries(), []);
  const names = await readdir(join(path, ".."));
  strictEqual(names.filter((name) => name.includes(".corrupt-")).length, 1);
});

Deno.test("only the newest set-aside files are kept", async () => {
  const path = await tempPath();
  let tick = 0;
  const { options } = setUp({ now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)) });
  await openFileJournal(path, options);
  for (let i = 0; i < 5; i++) {
    await writeFile(path, "garbage");
    await openFileJournal(path, options);
  }
  const aside = (await readdir(join(path, ".."))).filter((name) => name.includes(".corrupt-"));
  deepStrictEqual(aside.sort(), [
    "journal.json.corrupt-2026-01-01T00-00-02-000Z",
    "journal.json.corrupt-2026-01-01T00-00-03-000Z",
    "journal.json.corrupt-2026-01-01T00-00-04-000Z",
  ]);
});

Deno.test("the journal refuses entries beyond its bounds, and a file too large is set aside unread", async () => {
  const path = await tempPath();
  const { options } = setUp({ maxEntries: 2, maxBytes: 4096 });
  const journal = await openFileJournal(path, options);
  await journal.record(entry("a"));
  await journal.record(entry("b"));
  await rejects(journal.record(entry("c")), JournalFullError);
  await journal.record(entry("a", "replacing an entry is fine"));
  await rejects(journal.record(entry("b", "x".repeat(5000))), JournalFullError);
  await writeFile(path, "x".repeat(5000));
  deepStrictEqual((await openFileJournal(path, options)).entries(), []);
});

Deno.test("entries being settled do not count against maxEntries (bytes still do); recorded again, they count", async () => {
  const path = await tempPath();
  const { options } = setUp({ maxEntries: 2 });
  const journal = await openFileJournal(path, options);
  await journal.record(entry("a"));
  await journal.record(entry("b"));
  journal.settling("a");
  await journal.record(entry("c"));
  await rejects(journal.record(entry("d")), JournalFullError);
  journal.settling("b");
  await journal.record(entry("a", "a new attempt"));
  await rejects(journal.record(entry("d")), JournalFullError, "a counts again");
  journal.clear("c", "done");
  await journal.record(entry("d"));
  strictEqual(journal.size, 3);
});

Deno.test("metrics: entries and the oldest entry's age are read at each scrape", async () => {
  const path = await tempPath();
  const { options, registry } = setUp();
  const journal = await openFileJournal(path, options);
  await journal.record(entry("a"));
  journal.clear("missing", "pv_saved");
  await journal.record(entry("b"));
  journal.clear("b", "volume_deleted");
  await journal.close();
  const text = await registry.metrics();
  ok(text.includes("csi_node_provisioner_journal_entries 1"), text);
  ok(text.includes("csi_node_provisioner_journal_oldest_entry_age_seconds 3600"), text);
  ok(text.includes('csi_node_provisioner_journal_settled_total{outcome="volume_deleted"} 1'), text);
});

Deno.test("a write that fails rejects record() and counts; clear() only logs", async () => {
  const path = await tempPath();
  const { options, registry, lines } = setUp({
    afterStep: (step) => {
      if ((step === "appended" || step === "tmp-written") && failing) {
        throw new Error("EIO: disk gone");
      }
    },
  });
  let failing = false;
  const journal = await openFileJournal(path, options);
  failing = true;
  await rejects(journal.record(entry("a")), /EIO/);
  journal.clear("a", "pv_saved");
  await journal.close();
  ok((await registry.metrics()).includes("csi_node_provisioner_journal_write_failures_total 2"));
  ok(lines.some((line) => line.includes("Writing the journal failed")), lines.join("\n"));
});

const HEADER = '{"kind":"csi-node-provisioner-journal","version":2}\n';
const put = (e: Entry) => `{"put":${JSON.stringify(e)}}\n`;

Deno.test("each change is appended as a line; the file is replaced by its live entries once it has grown past its bound", async () => {
  const path = await tempPath();
  const steps: WriteStep[] = [];
  const { options } = setUp({ afterStep: (step) => void steps.push(step) });
  const journal = await openFileJournal(path, { ...options, compactBytes: 600 });
  steps.length = 0;
  await journal.record(entry("a"));
  journal.clear("a", "pv_saved");
  await journal.record(entry("b"));
  deepStrictEqual(steps, ["appended", "synced", "appended", "synced"]);
  strictEqual(
    await readFile(path, "utf8"),
    `${HEADER}${put(entry("a"))}{"clear":"a"}\n${put(entry("b"))}`,
  );
  for (let i = 0; i < 10; i++) {
    await journal.record(entry(`k${i}`));
    journal.clear(`k${i}`, "pv_saved");
  }
  await journal.close();
  ok(steps.includes("renamed"), steps.join());
  const text = await readFile(path, "utf8");
  ok(text.length <= 600, `${text.length} bytes on disk`);
  ok(text.startsWith(`${HEADER}${put(entry("b"))}`), text);
  deepStrictEqual(await keysOnDisk(path), ["b"]);
});

Deno.test("a last line cut short by a stop is dropped: the entries before it are kept, nothing is set aside, the file is written anew", async () => {
  const path = await tempPath();
  const { options, lines } = setUp();
  await (await openFileJournal(path, options)).close();
  await writeFile(path, `${HEADER}${put(entry("a"))}${put(entry("b"))}{"put":{"key":"c","si`);
  const journal = await openFileJournal(path, options);
  deepStrictEqual(journal.entries(), [entry("a"), entry("b")]);
  strictEqual(await readFile(path, "utf8"), `${HEADER}${put(entry("a"))}${put(entry("b"))}`);
  deepStrictEqual(await readdir(join(path, "..")), ["journal.json"]);
  ok(lines.some((line) => line.includes("written anew")), lines.join("\n"));
  ok(!lines.some((line) => line.includes('"level":"warn"')), lines.join());
  await journal.record(entry("c"));
  deepStrictEqual(await keysOnDisk(path), ["a", "b", "c"]);
});

Deno.test("a journal in the format before the log (version 1) is read and written anew as a log", async () => {
  const path = await tempPath();
  const { options } = setUp();
  await (await openFileJournal(path, options)).close();
  const v1 = (entries: Entry[]) =>
    `{"kind":"csi-node-provisioner-journal","version":1,"entries":[\n  ${
      entries.map((e) => JSON.stringify(e)).join(",\n  ")
    }\n]}\n`;
  await writeFile(path, v1([entry("a"), entry("b")]));
  const journal = await openFileJournal(path, options);
  deepStrictEqual(journal.entries(), [entry("a"), entry("b")]);
  strictEqual(await readFile(path, "utf8"), `${HEADER}${put(entry("a"))}${put(entry("b"))}`);
  deepStrictEqual(await readdir(join(path, "..")), ["journal.json"]);
});

Deno.test("a bad line amid the log keeps the entries of the others, in order, and sets the file aside", async () => {
  const path = await tempPath();
  const { options, lines } = setUp();
  await (await openFileJournal(path, options)).close();
  await writeFile(
    path,
    `${HEADER}${put(entry("a"))}garbage\n${put(entry("b"))}{"clear":"a"}\n${
      put(entry("b", "replaced"))
    }`,
  );
  deepStrictEqual((await openFileJournal(path, options)).entries(), [entry("b", "replaced")]);
  const names = await readdir(join(path, ".."));
  strictEqual(names.filter((name) => name.includes(".corrupt-")).length, 1);
  ok(lines.some((line) => line.includes("line 3: neither a put nor a clear")), lines.join("\n"));
});

Deno.test("after a failed append the next write replaces the file, which then holds what the journal holds", async () => {
  const path = await tempPath();
  const steps: WriteStep[] = [];
  let failing = false;
  const { options } = setUp({
    afterStep: (step) => {
      steps.push(step);
      if (step === "appended" && failing) throw new Error("EIO: disk gone");
    },
  });
  const journal = await openFileJournal(path, options);
  await journal.record(entry("a"));
  failing = true;
  await rejects(journal.record(entry("b")), /EIO/);
  failing = false;
  steps.length = 0;
  journal.clear("a", "pv_saved");
  await journal.record(entry("c"));
  deepStrictEqual(steps, ["tmp-written", "tmp-synced", "renamed", "dir-synced"]);
  strictEqual(await readFile(path, "utf8"), `${HEADER}${put(entry("b"))}${put(entry("c"))}`);
  deepStrictEqual(await keysOnDisk(path), journal.entries().map((e) => e.key));
  steps.length = 0;
  await journal.record(entry("d"));
  deepStrictEqual(steps, ["appended", "synced"], "appends again after the replacement");
  await journal.close();
  deepStrictEqual(await keysOnDisk(path), ["b", "c", "d"]);
});

Deno.test("a record whose write failed once is written by the next record of the same entry before it resolves", async () => {
  const path = await tempPath();
  let failures = 0;
  // Every write replaces the file, so a failure before the rename leaves the file as it was.
  const { options } = setUp({
    compactBytes: 0,
    afterStep: (step) => {
      if (step === "tmp-written" && failures > 0) {
        failures -= 1;
        throw new Error("ENOSPC: no space left on device");
      }
    },
  });
  const journal = await openFileJournal(path, options);
  failures = 1;
  await rejects(journal.record(entry("a")), /ENOSPC/);
  deepStrictEqual(await keysOnDisk(path), [], "the failed write left nothing on disk");
  await journal.record(entry("a"));
  deepStrictEqual(await keysOnDisk(path), ["a"], "the same entry again is written, not skipped");
  failures = 1;
  await rejects(journal.record(entry("a", "changed")), /ENOSPC/);
  ok(journal.writeProblem()?.includes(`${path}: ENOSPC`), String(journal.writeProblem()));
  await journal.record(entry("a", "changed"));
  strictEqual(journal.writeProblem(), undefined);
  await journal.close();
  deepStrictEqual((await openFileJournal(path, options)).entries(), [entry("a", "changed")]);
});
