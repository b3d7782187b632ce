/**
 * One journal, one writer: an exclusive flock(2) on `<journal>.lock`, a file
 * beside the journal that is never renamed (the journal itself is replaced by
 * renames, so a lock on it would not survive a compaction). The lock holds
 * across containers that share the node's directory and is released when the
 * holder's process ends, however it ends.
 */
import { constants } from "node:fs";
import { access, open } from "node:fs/promises";
import { type FileLock, tryLockFile } from "../runtime/platform.ts";

export type { FileLock } from "../runtime/platform.ts";

/** The lock file of the journal at `path`. */
export function lockPathOf(path: string): string {
  return `${path}.lock`;
}

/**
 * Takes the journal's lock without waiting: the lock, or undefined when
 * another process holds it. An existing lock file is used as it is, so a
 * read-only disk does not keep the agent from its journal.
 */
export async function tryLockJournal(path: string): Promise<FileLock | undefined> {
  const lockPath = lockPathOf(path);
  try {
    await access(lockPath, constants.F_OK);
  } catch {
    const handle = await open(lockPath, constants.O_WRONLY | constants.O_CREAT, 0o600);
    await handle.close();
  }
  return await tryLockFile(lockPath);
}
