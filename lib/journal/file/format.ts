/**
 * The journal file's format (version 2): a log of lines, each one JSON
 * document ending in "\n". The first line names the file,
 * `{"kind":"csi-node-provisioner-journal","version":2}`; each later line is
 * `{"put":<entry>}` (recorded or replaced, by its key) or `{"clear":"<key>"}`.
 * Changes are appended, each on disk before it is acknowledged; from time to
 * time the live entries are written to a new file that replaces the log
 * (../file_journal.ts).
 *
 * A last line without its "\n" is an append that a crash cut short: it was
 * never acknowledged (the record waiting for it had not resolved), so it is
 * dropped, not counted as damage. Version 1 (one JSON document with all the
 * entries, rewritten on every change) is still read, and then written anew
 * as version 2. Entries are opaque here; the caller checks each one (validate).
 */

const JOURNAL_KIND = "csi-node-provisioner-journal";
const JOURNAL_VERSION = 2;
/** The format before the log: `{"kind":...,"version":1,"entries":[...]}`. */
const WHOLE_DOCUMENT_VERSION = 1;

/** How a journal's entries are keyed and checked. */
export interface JournalShape<T> {
  keyOf(entry: T): string;
  validate(raw: unknown): T | string;
}

/** A journal read back: its valid entries, and what was wrong with the rest. */
interface ParsedJournal<T> {
  entries: T[];
  /** Empty when the whole file was good. */
  problems: string[];
  /** The file could not be read as a journal at all (nothing was kept). */
  unreadable: boolean;
  /** The file must be written anew: a cut-short last line, or the version 1 format. */
  rewrite: boolean;
}

/** The first line of every journal file. */
export function journalHeader(): string {
  return `{"kind":"${JOURNAL_KIND}","version":${JOURNAL_VERSION}}\n`;
}

/** The line that records (or replaces) an entry, given the entry's JSON text. */
export function putLine(entryText: string): string {
  return `{"put":${entryText}}\n`;
}

/** The line that removes the entry of `key`. */
export function clearLine(key: string): string {
  return `{"clear":${JSON.stringify(key)}}\n`;
}

/**
 * The text of a journal holding the entries whose JSON texts are given. The
 * caller keeps each entry's text from when it was put, so that writing the
 * journal anew never encodes every entry again.
 */
export function serializeJournal(entryTexts: Iterable<string>): string {
  let text = journalHeader();
  for (const entryText of entryTexts) text += putLine(entryText);
  return text;
}

/** Reads a journal's text, keeping every entry `validate` accepts. */
export function parseJournal<T>(text: string, shape: JournalShape<T>): ParsedJournal<T> {
  const end = text.indexOf("\n");
  // A version 1 document spans many lines: its first line alone is not JSON.
  const header = parseLine(end < 0 ? text : text.slice(0, end)) ?? parseLine(text);
  if (header === undefined) return unreadable("neither a log of JSON lines nor a JSON document");
  const { kind, version } = header;
  if (kind !== JOURNAL_KIND) return unreadable(`kind is ${JSON.stringify(kind)}`);
  if (version === JOURNAL_VERSION) {
    return end < 0
      ? { entries: [], problems: [], unreadable: false, rewrite: true }
      : replay(text.slice(end + 1), shape);
  }
  if (version === WHOLE_DOCUMENT_VERSION) return parseWholeDocument(text, shape);
  return unreadable(`version ${JSON.stringify(version)} is not ${JOURNAL_VERSION}`);
}

/** Applies the put and clear lines after the header, in order. */
function replay<T>(body: string, shape: JournalShape<T>): ParsedJournal<T> {
  const entries = new Map<string, T>();
  const problems: string[] = [];
  const lines = body.split("\n");
  // The text after the last "\n": empty, or an append that was cut short.
  const cutShort = lines.pop() !== "";
  for (const [index, line] of lines.entries()) {
    const problem = applyLine(line, { entries, shape });
    if (problem !== undefined) problems.push(`line ${index + 2}: ${problem}`);
  }
  return { entries: [...entries.values()], problems, unreadable: false, rewrite: cutShort };
}

function applyLine<T>(
  line: string,
  target: { entries: Map<string, T>; shape: JournalShape<T> },
): string | undefined {
  const parsed = parseLine(line);
  if (typeof parsed?.["clear"] === "string") {
    target.entries.delete(parsed["clear"]);
    return undefined;
  }
  if (parsed === undefined || !("put" in parsed)) return "neither a put nor a clear";
  const checked = target.shape.validate(parsed["put"]);
  if (typeof checked === "string") return checked;
  const key = target.shape.keyOf(checked);
  // A replaced entry takes its new place in the order, as in the journal's own map.
  target.entries.delete(key);
  target.entries.set(key, checked);
  return undefined;
}

/** The version 1 file: one document holding every entry. */
function parseWholeDocument<T>(text: string, shape: JournalShape<T>): ParsedJournal<T> {
  const document = parseLine(text);
  const entries = document?.["entries"];
  if (!Array.isArray(entries)) return unreadable("version 1 but entries is not a list");
  const kept: T[] = [];
  const problems: string[] = [];
  for (const raw of entries) {
    const checked = shape.validate(raw);
    if (typeof checked === "string") problems.push(checked);
    else kept.push(checked);
  }
  return { entries: kept, problems, unreadable: false, rewrite: true };
}

/** A JSON object, or undefined for anything else. */
function parseLine(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}

function unreadable<T>(problem: string): ParsedJournal<T> {
  return { entries: [], problems: [problem], unreadable: true, rewrite: true };
}
