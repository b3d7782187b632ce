/**
 * A journal in one file on the node's disk (file/format.ts): each change is
 * appended as a line, on disk when the write returns (O_DSYNC), and once
 * the file has grown past twice its live entries (and at least
 * `compactBytes`) the live entries are written to a new file that replaces
 * it atomically (file/synced_file.ts). So after a crash at any instant the file
 * holds the state before the change or the one after. Changes made while a
 * write is running are committed together by the next write (one durable
 * write for many), and a record resolves only once a write that includes it
 * is on disk.
 *
 * A clear is not written on its own at once: it goes to disk with the next
 * record's write, or after `clearDelayMs` when none comes, or at close. An
 * entry still on disk after its clear is harmless: settling it after a crash
 * finds the volume held by its PV, or deletes it again (both idempotent). So
 * a claim costs one durable append instead of two when claims keep coming.
 *
 * A missing file is created (and its directory). A file that cannot be read
 * as a journal is renamed `<file>.corrupt-<time>` with one Warning log line
 * naming both files, the valid entries it still had are kept, and the agent
 * goes on: an unreadable journal never stops it. The caller (keeper.ts)
 * holds the journal's lock, so that one process writes it. Only the newest few
 * set-aside files are kept, and the journal refuses new entries beyond its
 * bounds, so its disk use stays bounded.
 */
import { Buffer } from "node:buffer";
import { mkdir, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { clearLine, journalHeader, putLine, serializeJournal } from "./file/format.ts";
import { SyncedFile } from "./file/synced_file.ts";
import { loadJournal } from "./file/load.ts";
import {
  DEFAULT_CLEAR_DELAY_MS,
  DEFAULT_COMPACT_BYTES,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_ENTRIES,
  type FileJournalOptions,
} from "./options.ts";

export type { WriteStep } from "./file/synced_file.ts";
export type { FileJournalOptions } from "./options.ts";

/** A record refused because the journal is at its bounds. */
export class JournalFullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JournalFullError";
  }
}

/** A write of the journal that failed, naming the file and the system's error (e.g. ENOSPC). */
class JournalWriteError extends Error {
  readonly code: string | undefined;
  constructor(path: string, cause: unknown) {
    super(`${path}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "JournalWriteError";
    this.code = (cause as NodeJS.ErrnoException | undefined)?.code;
  }
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Opens (or creates) the journal at `path`; throws only when its entries
 * cannot be read. A file that is read but cannot be written now (a full or
 * read-only disk) opens with its entries and its write problem
 * (writeProblem()), to be written when the disk takes it.
 */
export async function openFileJournal<T>(
  path: string,
  options: FileJournalOptions<T>,
): Promise<FileJournal<T>> {
  await mkdir(dirname(path), { recursive: true });
  // A leftover of a replacement cut short; the next replacement truncates it anyway.
  await rm(`${path}.tmp`, { force: true }).catch(() => undefined);
  const loaded = await loadJournal(path, options);
  let file = SyncedFile.toReplace(path, options.afterStep);
  if (!loaded.rewrite) {
    file = await SyncedFile.forAppends(path, { bytes: loaded.bytes, afterStep: options.afterStep })
      .catch(() => file);
  }
  const journal = new FileJournal(file, options, loaded.entries);
  if (file.mustReplace) {
    await journal.flush().catch((error) =>
      options.logger.warn(
        { journal: path, err: error },
        "Writing the intent journal failed; its entries are loaded, and no new volume is " +
          "created until it is written",
      )
    );
  }
  return journal;
}

/** The open journal. */
export class FileJournal<T> {
  readonly path: string;
  readonly #file: SyncedFile;
  readonly #options: FileJournalOptions<T>;
  readonly #entries = new Map<string, { entry: T; text: string; bytes: number }>();
  /** The keys of each group's entries (FileJournalOptions.groupOf). */
  readonly #groups = new Map<string, Set<string>>();
  /** The size of a file holding only the live entries (the header and their put lines). */
  #bytes = Buffer.byteLength(journalHeader());
  /** Lines of the changes not yet in any write. */
  #unwritten: string[] = [];
  /** The UTF-8 length of the unwritten lines, known as they are made. */
  #unwrittenBytes = 0;
  #waiters: Waiter[] = [];
  #writing = false;
  /** Clears not yet in any write. */
  #clearsUnwritten = false;
  #clearTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** Keys of entries being settled: not counted against maxEntries (see settling()). */
  readonly #settling = new Set<string>();
  /** Keys whose latest record is in no write that succeeded yet. */
  readonly #notDurable = new Set<string>();
  /** Keys recorded since the current write took its lines. */
  #recordedSince = new Set<string>();
  /** The error of the last write, until a write succeeds. */
  #writeError: JournalWriteError | undefined;

  constructor(file: SyncedFile, options: FileJournalOptions<T>, entries: T[]) {
    this.path = file.path;
    this.#file = file;
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
   * when the write fails: the entry then stays in memory but not durable, and
   * recording it again writes it again.
   */
  async record(entry: T): Promise<void> {
    const key = this.#options.keyOf(entry);
    const text = JSON.stringify(entry);
    const previous = this.#entries.get(key);
    if (previous?.text === text && !this.#notDurable.has(key)) return;
    this.#settling.delete(key);
    const line = putLine(text);
    const bytes = Buffer.byteLength(line);
    this.#checkBounds(previous?.bytes ?? 0, bytes, key);
    this.#put(entry, { text, bytes });
    this.#notDurable.add(key);
    this.#recordedSince.add(key);
    this.#unwritten.push(line);
    this.#unwrittenBytes += bytes;
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
    this.#settling.delete(key);
    this.#notDurable.delete(key);
    this.#ungroup(key, previous.entry);
    this.#bytes -= previous.bytes;
    this.#options.metrics?.settled(outcome);
    const line = clearLine(key);
    this.#unwritten.push(line);
    this.#unwrittenBytes += Buffer.byteLength(line);
    this.#clearsUnwritten = true;
    if (this.#clearTimer !== undefined || this.#closed) return;
    const delay = this.#options.clearDelayMs ?? DEFAULT_CLEAR_DELAY_MS;
    this.#clearTimer = setTimeout(() => {
      this.#clearTimer = undefined;
      void this.#writeClears();
    }, delay);
  }

  /**
   * Marks an entry as being settled (its caller no longer needs it, only its
   * end): it stops counting against maxEntries, so that entries waiting long
   * to be settled never make the journal refuse new ones. maxBytes still
   * counts it. Recording the key again counts it again.
   */
  settling(key: string): void {
    if (this.#entries.has(key)) this.#settling.add(key);
  }

  /** Writes the current state (used after loading a journal that had to be repaired). */
  async flush(): Promise<void> {
    await this.#commit();
  }

  /**
   * Why the journal cannot be written now (the last write's error, naming the
   * path), undefined once a write has succeeded.
   */
  writeProblem(): string | undefined {
    return this.#writeError?.message;
  }

  /**
   * Writes clears still unwritten, waits for a write in flight and closes the
   * file (the process exits after close); a later write opens it again.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#clearTimer);
    this.#clearTimer = undefined;
    if (this.#clearsUnwritten || this.#writing) await this.#commitOrLog();
    await this.#file.close();
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
    const entries = this.#entries.size - this.#settling.size + (oldBytes === 0 ? 1 : 0);
    const bytes = this.#bytes - oldBytes + newBytes;
    if (entries > maxEntries || bytes > maxBytes) {
      throw new JournalFullError(
        `the intent journal ${this.path} is full (${this.#entries.size} entries, ${this.#bytes} ` +
          `bytes; at most ${maxEntries} entries and ${maxBytes} bytes): no new volume (${key}) ` +
          "is created until earlier ones are settled",
      );
    }
  }

  #put(entry: T, encoded?: { text: string; bytes: number }): void {
    const text = encoded?.text ?? JSON.stringify(entry);
    const bytes = encoded?.bytes ?? Buffer.byteLength(putLine(text));
    const key = this.#options.keyOf(entry);
    const previous = this.#entries.get(key);
    if (previous !== undefined) this.#ungroup(key, previous.entry);
    this.#bytes += bytes - (previous?.bytes ?? 0);
    this.#entries.set(key, { entry, text, bytes });
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
        const lines = this.#unwritten.join("");
        const bytes = this.#unwrittenBytes;
        const keys = this.#recordedSince;
        this.#unwritten = [];
        this.#unwrittenBytes = 0;
        this.#recordedSince = new Set();
        try {
          await this.#write(lines, bytes);
          this.#writeError = undefined;
          for (const key of keys) if (!this.#recordedSince.has(key)) this.#notDurable.delete(key);
          for (const waiter of batch) waiter.resolve();
        } catch (error) {
          // The file's end is unknown now: the next write replaces it, with these changes in it.
          this.#writeError = new JournalWriteError(this.path, error);
          this.#clearsUnwritten ||= clears;
          this.#options.metrics?.writeFailed();
          for (const waiter of batch) waiter.reject(this.#writeError);
        }
      }
    } finally {
      this.#writing = false;
    }
  }

  /** Appends the changes' lines, or replaces the file by the live entries when it is due. */
  async #write(lines: string, bytes: number): Promise<void> {
    const compactBytes = this.#options.compactBytes ?? DEFAULT_COMPACT_BYTES;
    const grown = this.#file.bytes + bytes;
    const due = compactBytes <= 0 || grown > Math.max(compactBytes, 2 * this.#bytes) ||
      grown > (this.#options.maxBytes ?? DEFAULT_MAX_BYTES);
    if (this.#file.mustReplace || due) {
      await this.#file.replace(serializeJournal(textsOf(this.#entries.values())));
    } else if (lines !== "") {
      await this.#file.append(lines);
    }
  }
}

function* textsOf(entries: Iterable<{ text: string }>): Iterable<string> {
  for (const entry of entries) yield entry.text;
}
