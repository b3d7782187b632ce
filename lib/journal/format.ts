/**
 * The journal file's format: one JSON document,
 * `{"kind":"csi-node-provisioner-journal","version":1,"entries":[...]}`,
 * rewritten whole (to a temporary file, fsynced, renamed over the old one)
 * on every change, so that a reader sees either the old or the new file.
 * Entries are opaque here; the caller checks each one (validate).
 */

export const JOURNAL_KIND = "csi-node-provisioner-journal";
export const JOURNAL_VERSION = 1;

/** A journal read back: its valid entries, and what was wrong with the rest. */
export interface ParsedJournal<T> {
  entries: T[];
  /** Empty when the whole file was good. */
  problems: string[];
  /** The file could not be read as a journal at all (nothing was kept). */
  unreadable: boolean;
}

/**
 * The text of a journal holding the entries whose JSON texts are given. The
 * caller keeps each entry's text from when it was put: the whole file is
 * rewritten on every change, and encoding every entry again each time made
 * a burst of n claims cost O(n²) JSON.stringify calls.
 */
export function serializeJournal(entryTexts: readonly string[]): string {
  const lines = entryTexts.map((text) => `  ${text}`);
  const body = lines.length === 0 ? "[]" : `[\n${lines.join(",\n")}\n]`;
  return `{"kind":"${JOURNAL_KIND}","version":${JOURNAL_VERSION},"entries":${body}}\n`;
}

/** Reads a journal's text, keeping every entry `validate` accepts. */
export function parseJournal<T>(
  text: string,
  validate: (raw: unknown) => T | string,
): ParsedJournal<T> {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return unreadable(`not JSON: ${(error as Error).message}`);
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    return unreadable("not a JSON object");
  }
  const { kind, version, entries } = document as Record<string, unknown>;
  if (kind !== JOURNAL_KIND) return unreadable(`kind is ${JSON.stringify(kind)}`);
  if (version !== JOURNAL_VERSION) {
    return unreadable(`version ${JSON.stringify(version)} is not ${JOURNAL_VERSION}`);
  }
  if (!Array.isArray(entries)) return unreadable("entries is not a list");
  const kept: T[] = [];
  const problems: string[] = [];
  for (const raw of entries) {
    const checked = validate(raw);
    if (typeof checked === "string") problems.push(checked);
    else kept.push(checked);
  }
  return { entries: kept, problems, unreadable: false };
}

function unreadable<T>(problem: string): ParsedJournal<T> {
  return { entries: [], problems: [problem], unreadable: true };
}
