/**
 * The keeper on a real filesystem: a second keeper of the same journal waits
 * for the first one's lock and says so; a journal that cannot be opened or
 * written is retried, never thrown, and readiness names the path and error
 * until the disk takes it.
 */
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { mkdir, mkdtemp, rmdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import type { FileJournalOptions } from "./file_journal.ts";
import { volatileFilesystem } from "./disk.ts";
import { JournalKeeper } from "./keeper.ts";
import { createJournalMetrics } from "./metrics.ts";
import { waitFor } from "../../tests/cluster/wait.ts";
import { capturing, quiet } from "../../tests/fakes/logger.ts";
import type { Logger } from "../log/logger.ts";

interface Entry {
  key: string;
  since: string;
}

const entry = (key: string): Entry => ({ key, since: "2026-01-01T00:00:00.000Z" });

function options(logger: Logger, overrides: Partial<FileJournalOptions<Entry>> = {}) {
  return {
    keyOf: (e: Entry) => e.key,
    groupOf: () => "",
    sinceOf: (e: Entry) => e.since,
    validate: (raw: unknown) => raw as Entry,
    logger,
    timing: { lockPollMs: 10, baseMs: 10, maxMs: 20 },
    ...overrides,
  };
}

async function tempPath(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), "keeper-test-")), "journal.json");
}

Deno.test("a second keeper of one journal waits for the first one's lock, says so, and opens once it is released", async () => {
  const path = await tempPath();
  const { logger, lines } = capturing(2);
  const stop = new AbortController();
  const first = new JournalKeeper(path, options(logger));
  const running = first.run(stop.signal);
  ok(await first.opened(stop.signal));
  await first.journal!.record(entry("a"));
  const second = new JournalKeeper(path, options(logger));
  const waiting = second.run(stop.signal);
  await waitFor(() => String(second.readiness()).includes("lock"), {
    description: "waits for the lock",
    timeoutMs: 5000,
    intervalMs: 5,
  });
  strictEqual(
    second.readiness(),
    `waiting for the intent journal's lock ${path}.lock: another agent on this node holds it ` +
      `and writes ${path}`,
  );
  strictEqual(second.journal, undefined, "not opened while the other holds the lock");
  await rejects(second.record(entry("b")), /waiting for the intent journal's lock/);
  deepStrictEqual([second.size, second.entries(), second.get("a")], [0, [], undefined]);
  ok(lines.some((line) => line.includes("waiting for the intent journal's lock")));
  await first.close();
  ok(await second.opened(stop.signal));
  deepStrictEqual(second.journal!.entries(), [entry("a")]);
  strictEqual(second.readiness(), true);
  stop.abort();
  await Promise.all([running, waiting]);
  await second.close();
});

Deno.test("a journal that cannot be read is retried with backoff, with the reason in readiness, until it opens", async () => {
  const path = await tempPath();
  await mkdir(path);
  const stop = new AbortController();
  const keeper = new JournalKeeper(path, options(quiet));
  const running = keeper.run(stop.signal);
  await waitFor(() => String(keeper.readiness()).includes("EISDIR"), {
    description: "the read error in readiness",
    timeoutMs: 5000,
    intervalMs: 5,
  });
  ok(String(keeper.readiness()).startsWith(`cannot open the intent journal ${path}: `));
  await rmdir(path);
  ok(await keeper.opened(stop.signal));
  strictEqual(keeper.readiness(), true);
  stop.abort();
  await running;
  await keeper.close();
});

Deno.test("a journal read but not rewritable opens with its entries, refuses records until the disk takes a write, then heals by itself", async () => {
  const path = await tempPath();
  // The older format: it must be written anew before anything is appended.
  await writeFile(
    path,
    `{"kind":"csi-node-provisioner-journal","version":2}\n{"put":${
      JSON.stringify(entry("a"))
    }}\n{"put":`,
  );
  let full = true;
  const { logger, lines } = capturing(2);
  const stop = new AbortController();
  const keeper = new JournalKeeper(
    path,
    options(logger, {
      afterStep: (step) => {
        if (step === "tmp-written" && full) throw new Error("ENOSPC: no space left on device");
      },
    }),
  );
  const running = keeper.run(stop.signal);
  ok(await keeper.opened(stop.signal));
  deepStrictEqual(keeper.journal!.entries(), [entry("a")]);
  strictEqual(
    keeper.readiness(),
    `cannot write the intent journal ${path}: ENOSPC: no space left on device: no volume is ` +
      "created until it can",
  );
  full = false;
  await waitFor(() => keeper.readiness() === true, {
    description: "writable again without a record",
    timeoutMs: 5000,
    intervalMs: 5,
  });
  ok(lines.some((line) => line.includes("Intent journal writable again")));
  stop.abort();
  await running;
  await keeper.close();
});

Deno.test("a journal in memory (tmpfs) is a Warning and a metric; one on disk is not", async () => {
  const { logger, lines } = capturing(2);
  const registry = new Registry();
  const metrics = createJournalMetrics(registry);
  const path = join(await Deno.makeTempDir({ dir: "/dev/shm" }), "journal.json");
  const stop = new AbortController();
  const keeper = new JournalKeeper(path, options(logger, { metrics }));
  const running = keeper.run(stop.signal);
  ok(await keeper.opened(stop.signal));
  ok(lines.some((line) => line.includes(`${path} is on tmpfs`)), lines.join("\n"));
  const text = await registry.metrics();
  ok(text.includes("csi_node_provisioner_journal_volatile 1"), text);
  ok(text.includes("csi_node_provisioner_journal_writable 1"), text);
  stop.abort();
  await running;
  await keeper.close();
  strictEqual(await volatileFilesystem(await tempPath()), undefined, "the test's tmpdir is a disk");
});

Deno.test("the keeper passes settling() on: an entry being settled leaves room for a new one", async () => {
  const path = await tempPath();
  const stop = new AbortController();
  const keeper = new JournalKeeper(path, options(quiet, { maxEntries: 1 }));
  const running = keeper.run(stop.signal);
  ok(await keeper.opened(stop.signal));
  await keeper.record(entry("old"));
  await rejects(keeper.record(entry("new")), /full/);
  keeper.settling("old");
  await keeper.record(entry("new"));
  deepStrictEqual(keeper.entries().map((e) => e.key).sort(), ["new", "old"]);
  stop.abort();
  await running;
  await keeper.close();
});
