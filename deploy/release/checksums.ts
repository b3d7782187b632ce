/**
 * SHA256SUMS over a release directory, in the format `sha256sum -c` reads:
 * one line per file, the hash, two spaces, the file's name.
 */

import { createHash } from "node:crypto";
import { join } from "node:path";

export const CHECKSUMS_FILE = "SHA256SUMS";

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  const file = await Deno.open(path);
  for await (const chunk of file.readable) hash.update(chunk);
  return hash.digest("hex");
}

/** The lines for these files, sorted by name. */
export function checksumLines(files: { name: string; sha256: string }[]): string {
  return [...files].sort((a, b) => a.name.localeCompare(b.name))
    .map((file) => `${file.sha256}  ${file.name}\n`).join("");
}

/** Writes dir/SHA256SUMS over every other file in dir (not recursive: a release is flat). */
export async function writeChecksums(dir: string): Promise<string> {
  const files = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name === CHECKSUMS_FILE) continue;
    if (!entry.isFile) throw new Error(`${join(dir, entry.name)}: a release holds only files`);
    files.push({ name: entry.name, sha256: await sha256OfFile(join(dir, entry.name)) });
  }
  const path = join(dir, CHECKSUMS_FILE);
  await Deno.writeTextFile(path, checksumLines(files));
  return path;
}
