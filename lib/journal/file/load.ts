/**
 * Reading the journal file at start: its entries, its size, and whether it
 * must be written anew because it was missing, cut short by a crash, of the
 * older format, or had to be set aside (../file_journal.ts says how an
 * unreadable journal is handled).
 */
import { open, readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { parseJournal } from "./format.ts";
import { DEFAULT_MAX_BYTES, type FileJournalOptions } from "../options.ts";
const DEFAULT_KEEP_SET_ASIDE = 3;
const SET_ASIDE_INFIX = ".corrupt-";

/** The journal file at `path` as read at start. */
interface LoadedJournal<T> {
  entries: T[];
  /** The file's size in bytes. */
  bytes: number;
  /** The file must be written anew before anything is appended to it. */
  rewrite: boolean;
}

/** The entries of the file at `path`, and whether the file must be written again. */
export async function loadJournal<T>(
  path: string,
  options: FileJournalOptions<T>,
): Promise<LoadedJournal<T>> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      return { entries: [], bytes: 0, rewrite: true };
    }
    throw error;
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (size > maxBytes) {
    await setAside(path, `${size} bytes, more than the journal's ${maxBytes}`, options);
    return { entries: [], bytes: 0, rewrite: true };
  }
  const handle = await open(path, "r");
  const text = await handle.readFile({ encoding: "utf8" }).finally(() => handle.close());
  const parsed = parseJournal(text, options);
  if (parsed.problems.length === 0) {
    if (parsed.rewrite) logWrittenAnew(path, parsed.entries.length, options);
    return { entries: parsed.entries, bytes: size, rewrite: parsed.rewrite };
  }
  const kept = parsed.unreadable ? "" : `; kept its ${parsed.entries.length} valid entries`;
  await setAside(path, `${parsed.problems.slice(0, 3).join("; ")}${kept}`, options);
  return { entries: parsed.entries, bytes: 0, rewrite: true };
}

/** A file written anew without damage: the older format, or a last append a crash cut short. */
function logWrittenAnew<T>(path: string, entries: number, options: FileJournalOptions<T>): void {
  options.logger.info(
    { journal: path, entries },
    "Intent journal written anew (its last write was cut short by a stop, or it has the older format)",
  );
}

/** Renames an unreadable journal out of the way, with the one Warning line that names it. */
async function setAside<T>(path: string, problem: string, options: FileJournalOptions<T>) {
  const stamp = (options.now?.() ?? new Date()).toISOString().replace(/[:.]/g, "-");
  const aside = `${path}${SET_ASIDE_INFIX}${stamp}`;
  await rename(path, aside);
  options.metrics?.setAside();
  options.logger.warn(
    { journal: path, setAside: aside },
    `Intent journal ${path} is unreadable (${problem}): set aside as ${aside}, going on without ` +
      "it; volumes its entries named may need deleting by hand (see docs/design.md, 'Reliability')",
  );
  const keep = options.keepSetAside ?? DEFAULT_KEEP_SET_ASIDE;
  const prefix = `${basename(path)}${SET_ASIDE_INFIX}`;
  const old = (await readdir(dirname(path))).filter((name) => name.startsWith(prefix)).sort();
  for (const name of old.slice(0, Math.max(0, old.length - keep))) {
    await rm(join(dirname(path), name), { force: true });
  }
}
