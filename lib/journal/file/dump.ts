/**
 * `--journal-dump`: the journal as JSON on stdout, read-only (an unreadable
 * file is reported, never set aside), for `kubectl exec` into the agent's
 * container, which has no shell or jq of its own.
 */
import { readFile } from "node:fs/promises";
import { type JournalShape, parseJournal } from "./format.ts";

/** Prints the journal at `path`; resolves to the exit code (1: missing or unreadable). */
export async function dumpJournal<T>(
  path: string,
  options: JournalShape<T> & {
    stdout: (text: string) => void;
    stderr: (text: string) => void;
  },
): Promise<number> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    options.stderr(`cannot read the intent journal ${path}: ${(error as Error).message}\n`);
    return 1;
  }
  const parsed = parseJournal(text, options);
  if (parsed.unreadable) {
    options.stderr(`the intent journal ${path} is unreadable: ${parsed.problems.join("; ")}\n`);
    return 1;
  }
  options.stdout(
    `${JSON.stringify({ path, entries: parsed.entries, problems: parsed.problems }, null, 2)}\n`,
  );
  return parsed.problems.length === 0 ? 0 : 1;
}
