/** The file journal's options and their defaults (file_journal.ts). */
import type { Logger } from "../log/logger.ts";
import type { AfterStep } from "./file/synced_file.ts";
import type { JournalMetrics } from "./metrics.ts";

export const DEFAULT_MAX_ENTRIES = 4096;
/** Largest journal file, in bytes, unless the options say otherwise. */
export const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
export const DEFAULT_CLEAR_DELAY_MS = 1000;
export const DEFAULT_COMPACT_BYTES = 256 * 1024;

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
  /** Most entries at once, not counting those being settled (default 4096). */
  maxEntries?: number;
  /** Largest file, in bytes (default 32 MiB). */
  maxBytes?: number;
  /** Set-aside files kept (default 3); older ones are removed. */
  keepSetAside?: number;
  /** How long a clear waits for a record to be written with (default 1000 ms). */
  clearDelayMs?: number;
  /**
   * The file is written anew instead of appended to once it would grow past
   * this many bytes and twice its live entries' size (default 256 KiB; 0:
   * every write replaces the file).
   */
  compactBytes?: number;
  /** Called after each step of every write: a seam for crash tests. */
  afterStep?: AfterStep;
  now?: () => Date;
}
