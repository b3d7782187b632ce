/**
 * The commands an operator page gives, read from the page itself: the
 * `sh` block that follows an HTML comment marker, one command a line, so a
 * test runs exactly what the page says.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../cluster/drivers.ts";

/**
 * Words of a command line as a shell splits them, for the quoting the pages
 * use: single-quoted parts, also inside a word (`jsonpath='{...}'`).
 */
export function shellWords(line: string): string[] {
  return [...line.matchAll(/(?:[^\s']|'[^']*')+/g)].map((match) =>
    match[0].replace(/'([^']*)'/g, "$1")
  );
}

/** The commands of the `sh` block after `<!-- MARKER` in `page` (a path under the repository). */
export function commandsAfterMarker(page: string, marker: string): string[][] {
  const text = readFileSync(join(REPO_ROOT, page), "utf8");
  const at = text.indexOf(`<!-- ${marker}`);
  assert.ok(at >= 0, `${page} has the ${marker} marker`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(at));
  assert.ok(block, `a sh block follows ${marker} in ${page}`);
  return block[1]!.split("\n").map((line) => line.trim()).filter((line) => line !== "")
    .map(shellWords);
}

/** kubectl's arguments of a page's command, its placeholders (whole words) filled in. */
export function kubectlArgs(words: string[], values: Record<string, string>): string[] {
  assert.equal(words[0], "kubectl", `a kubectl command: ${words.join(" ")}`);
  const placeholder = new RegExp(`\\b(${Object.keys(values).join("|")})\\b`, "g");
  return words.slice(1).map((word) => word.replace(placeholder, (name) => values[name]!));
}
