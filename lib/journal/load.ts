/**
 * Reading the journal file at start: its entries, and whether it must be
 * written again because it was missing or had to be set aside (file_journal.ts
 * says how an unreadable journal is handled).
 */
import { open, readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { FileJournalOptions } from "./file_journal.ts";
import { parseJournal } from "./format.ts";

/** Largest journal file, in bytes, unless the options say otherwise. */
export const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
const DEFAULT_KEEP_SET_ASIDE = 3;
const SET_ASIDE_INFIX = ".corrupt-";

/** The entries of the file at `path`, and whether the file must be written again. */
export async function loadJournal<T>(
  path: string,
  options: FileJournalOptions<T>,
): Promise<{ entries: T[]; rewrite: boolean }> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { entries: [], rewrite: true };
    throw error;
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (size > maxBytes) {
    await setAside(path, `${size} bytes, more than the journal's ${maxBytes}`, options);
    return { entries: [], rewrite: true };
  }
  const handle = await open(path, "r");
  const text = await handle.readFile({ encoding: "utf8" }).finally(() => handle.close());
  const parsed = parseJournal(text, options.validate);
  if (parsed.problems.length === 0) return { entries: parsed.entries, rewrite: false };
  const kept = parsed.unreadable ? "" : `; kept its ${parsed.entries.length} valid entries`;
  await setAside(path, `${parsed.problems.slice(0, 3).join("; ")}${kept}`, options);
  return { entries: parsed.entries, rewrite: true };
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
      "it; volumes its entries named may need deleting by hand (see the README, Reliability)",
  );
  const keep = options.keepSetAside ?? DEFAULT_KEEP_SET_ASIDE;
  const prefix = `${basename(path)}${SET_ASIDE_INFIX}`;
  const old = (await readdir(dirname(path))).filter((name) => name.startsWith(prefix)).sort();
  for (const name of old.slice(0, Math.max(0, old.length - keep))) {
    await rm(join(dirname(path), name), { force: true });
  }
}
