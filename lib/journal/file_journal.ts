/**
 * A journal in one file on the node's disk. Every change rewrites the file
 * atomically: the whole journal goes to `<file>.tmp`, which is fsynced and
 * renamed over the file, and then the directory is fsynced, so that after a
 * crash at any instant the file holds either the state before the change or
 * the one after, never a mix. Changes made while a write is running are
 * committed together by the next write (one fsync for many), and a record
 * resolves only once a write that includes it is on disk.
 *
 * A clear is not written on its own at once: it goes to disk with the next
 * record's write, or after `clearDelayMs` when none comes, or at close. An
 * entry still on disk after its clear is harmless: settling it after a crash
 * finds the volume held by its PV, or deletes it again (both idempotent). So
 * a claim costs one fsync'd rewrite instead of two when claims keep coming.
 *
 * A missing file is created (and its directory). A file that cannot be read
 * as a journal is renamed `<file>.corrupt-<time>` with one Warning log line
 * naming both files, the valid entries it still had are kept, and the agent
 * goes on: an unreadable journal never stops it. Only the newest few
 * set-aside files are kept, and the journal refuses new entries beyond its
 * bounds, so its disk use stays bounded.
 */
import { mkdir, open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import type { Logger } from "../log/logger.ts";
import { serializeJournal } from "./format.ts";
import { DEFAULT_MAX_BYTES, loadJournal } from "./load.ts";
import type { JournalMetrics } from "./metrics.ts";

/** The steps of one write, in order (a crash test stops the process after each). */
export type WriteStep = "tmp-written" | "tmp-synced" | "renamed" | "dir-synced";

/** What the journal holds and how it is bounded. */
export interface FileJournalOptions<T> {
  /** The entry's key: one entry per key. */
  keyOf(entry: T): string;
  /**
   * The group of entries the entry belongs to (an intent's claim), so that
   * entriesOf() finds a group without a scan: a caller that asks once per
   * event would otherwise pay for every entry in flight, every time.
   */
  groupOf(entry: T): string;
  /** When the entry was first recorded (ISO 8601), for the age metric. */
  sinceOf(entry: T): string;
  /** Checks an entry read back from disk: the entry, or what is wrong with it. */
  validate(raw: unknown): T | string;
  logger: Logger;
  metrics?: JournalMetrics;
  /** Most entries at once (default 4096). */
  maxEntries?: number;
  /** Largest file, in bytes (default 32 MiB). */
  maxBytes?: number;
  /** Set-aside files kept (default 3); older ones are removed. */
  keepSetAside?: number;
  /** How long a clear waits for a record to be written with (default 1000 ms). */
  clearDelayMs?: number;
  /** Called after each step of every write: a seam for crash tests. */
  afterStep?: (step: WriteStep) => Promise<void> | void;
  now?: () => Date;
}

/** A record refused because the journal is at its bounds. */
export class JournalFullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JournalFullError";
  }
}

const DEFAULT_MAX_ENTRIES = 4096;
const DEFAULT_CLEAR_DELAY_MS = 1000;

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/** Opens (or creates) the journal at `path`; throws only when the path cannot be used at all. */
export async function openFileJournal<T>(
  path: string,
  options: FileJournalOptions<T>,
): Promise<FileJournal<T>> {
  await mkdir(dirname(path), { recursive: true });
  await rm(`${path}.tmp`, { force: true });
  const loaded = await loadJournal(path, options);
  const journal = new FileJournal(path, options, loaded.entries);
  if (loaded.rewrite) await journal.flush();
  return journal;
}

/** The open journal. */
export class FileJournal<T> {
  readonly path: string;
  readonly #options: FileJournalOptions<T>;
  readonly #entries = new Map<string, { entry: T; text: string }>();
  /** The keys of each group's entries (FileJournalOptions.groupOf). */
  readonly #groups = new Map<string, Set<string>>();
  #bytes = 0;
  #waiters: Waiter[] = [];
  #writing = false;
  /** Clears not yet in any write. */
  #clearsUnwritten = false;
  #clearTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(path: string, options: FileJournalOptions<T>, entries: T[]) {
    this.path = path;
    this.#options = options;
    for (const entry of entries) this.#put(entry);
    options.metrics?.observe(this);
  }

  /** Entries now. */
  get size(): number {
    return this.#entries.size;
  }

  /** The oldest entry's time (ISO 8601), undefined when empty. */
  oldestSince(): string | undefined {
    let oldest: string | undefined;
    for (const { entry } of this.#entries.values()) {
      const since = this.#options.sinceOf(entry);
      if (oldest === undefined || since < oldest) oldest = since;
    }
    return oldest;
  }

  entries(): T[] {
    return [...this.#entries.values()].map(({ entry }) => entry);
  }

  /** The entry of a key, undefined when there is none. */
  get(key: string): T | undefined {
    return this.#entries.get(key)?.entry;
  }

  /** The entries of one group, without a scan of the others. */
  entriesOf(group: string): T[] {
    const keys = this.#groups.get(group);
    if (keys === undefined) return [];
    return [...keys].map((key) => this.#entries.get(key)!.entry);
  }

  /**
   * Records (or replaces) an entry; resolves once it is on disk. An entry of
   * the same key keeps its first `since` (the caller passes it through).
   * Rejects with JournalFullError beyond the bounds, and with the I/O error
   * when the write fails.
   */
  async record(entry: T): Promise<void> {
    const key = this.#options.keyOf(entry);
    const text = JSON.stringify(entry);
    const previous = this.#entries.get(key);
    if (previous?.text === text) return;
    this.#checkBounds(previous?.text.length ?? 0, text.length, key);
    this.#put(entry, text);
    await this.#commit();
  }

  /**
   * Removes an entry and counts how it ended. The removal reaches the disk
   * with the next write (see above); a failure of that write is logged, and
   * the entry stays on disk until a later write succeeds.
   */
  clear(key: string, outcome: string): void {
    const previous = this.#entries.get(key);
    if (previous === undefined) return;
    this.#entries.delete(key);
    this.#ungroup(key, previous.entry);
    this.#bytes -= previous.text.length;
    this.#options.metrics?.settled(outcome);
    this.#clearsUnwritten = true;
    if (this.#clearTimer !== undefined || this.#closed) return;
    const delay = this.#options.clearDelayMs ?? DEFAULT_CLEAR_DELAY_MS;
    this.#clearTimer = setTimeout(() => {
      this.#clearTimer = undefined;
      void this.#writeClears();
    }, delay);
  }

  /** Writes the current state (used after loading a journal that had to be repaired). */
  async flush(): Promise<void> {
    await this.#commit();
  }

  /**
   * Writes clears still unwritten, and waits for a write in flight (the
   * process exits after close); later clears are written only by a record.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#clearTimer);
    this.#clearTimer = undefined;
    if (this.#clearsUnwritten || this.#writing) await this.#commitOrLog();
  }

  async #writeClears(): Promise<void> {
    if (this.#clearsUnwritten) await this.#commitOrLog();
  }

  async #commitOrLog(): Promise<void> {
    try {
      await this.#commit();
    } catch (error) {
      // On disk the entries stay until the next write; settling them again later is harmless.
      this.#options.logger.warn({ journal: this.path, err: error }, "Writing the journal failed");
    }
  }

  #checkBounds(oldBytes: number, newBytes: number, key: string): void {
    const maxEntries = this.#options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    const maxBytes = this.#options.maxBytes ?? DEFAULT_MAX_BYTES;
    const entries = this.#entries.size + (oldBytes === 0 ? 1 : 0);
    const bytes = this.#bytes - oldBytes + newBytes;
    if (entries > maxEntries || bytes > maxBytes) {
      throw new JournalFullError(
        `the intent journal ${this.path} is full (${this.#entries.size} entries, ${this.#bytes} ` +
          `bytes; at most ${maxEntries} entries and ${maxBytes} bytes): no new volume (${key}) ` +
          "is created until earlier ones are settled",
      );
    }
  }

  #put(entry: T, text = JSON.stringify(entry)): void {
    const key = this.#options.keyOf(entry);
    const previous = this.#entries.get(key);
    if (previous !== undefined) this.#ungroup(key, previous.entry);
    this.#bytes += text.length - (previous?.text.length ?? 0);
    this.#entries.set(key, { entry, text });
    const group = this.#options.groupOf(entry);
    const keys = this.#groups.get(group) ?? new Set<string>();
    this.#groups.set(group, keys.add(key));
  }

  #ungroup(key: string, entry: T): void {
    const group = this.#options.groupOf(entry);
    const keys = this.#groups.get(group);
    keys?.delete(key);
    if (keys?.size === 0) this.#groups.delete(group);
  }

  #commit(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
      void this.#writeLoop();
    });
  }

  /** One write at a time; whoever waits when it starts is served by it. */
  async #writeLoop(): Promise<void> {
    if (this.#writing) return;
    this.#writing = true;
    try {
      while (this.#waiters.length > 0) {
        const batch = this.#waiters;
        this.#waiters = [];
        const clears = this.#clearsUnwritten;
        this.#clearsUnwritten = false;
        clearTimeout(this.#clearTimer);
        this.#clearTimer = undefined;
        const text = serializeJournal([...this.#entries.values()].map(({ text }) => text));
        try {
          await this.#writeAtomically(text);
          for (const waiter of batch) waiter.resolve();
        } catch (error) {
          this.#clearsUnwritten ||= clears;
          this.#options.metrics?.writeFailed();
          for (const waiter of batch) waiter.reject(error);
        }
      }
    } finally {
      this.#writing = false;
    }
  }

  async #writeAtomically(text: string): Promise<void> {
    const step = this.#options.afterStep ?? (() => {});
    const tmp = `${this.path}.tmp`;
    const file = await open(tmp, "w", 0o600);
    try {
      await file.writeFile(text, { encoding: "utf8" });
      await step("tmp-written");
      await file.sync();
    } finally {
      await file.close();
    }
    await step("tmp-synced");
    await rename(tmp, this.path);
    await step("renamed");
    const directory = await open(dirname(this.path), "r");
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
    await step("dir-synced");
  }
}
