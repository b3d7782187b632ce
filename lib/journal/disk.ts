/**
 * Checks of the journal's directory at start-up: one that this process may
 * not write (a configuration error that no retry heals) and one in memory
 * (tmpfs, ramfs: a node reboot wipes the journal, and with it what it
 * protects).
 */
import { constants } from "node:fs";
import { access, mkdir, statfs } from "node:fs/promises";
import { dirname } from "node:path";
import { getuid } from "node:process";

const TMPFS_MAGIC = 0x01021994;
const RAMFS_MAGIC = 0x858458f6;

/**
 * What is wrong when this process has no write permission on the journal's
 * directory (EACCES, EPERM), undefined otherwise; other errors (a read-only
 * or full disk) are for the journal's retries.
 */
export async function journalPermissionProblem(path: string): Promise<string | undefined> {
  const directory = dirname(path);
  try {
    await mkdir(directory, { recursive: true });
    await access(directory, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM") return undefined;
    return `the intent journal's directory ${directory} is not writable by uid ${getuid?.()} ` +
      `(${code}): run the agent as root (runAsUser: 0, as deploy/ does), or give that uid ` +
      "write access to the directory, or point --journal-path at a directory it may write";
  }
}

/** The name of the in-memory filesystem that holds `path`'s directory, undefined on a disk. */
export async function volatileFilesystem(path: string): Promise<string | undefined> {
  try {
    // Unsigned: f_type is a 32-bit magic that a runtime may hand over as signed.
    const type = (await statfs(dirname(path))).type >>> 0;
    if (type === TMPFS_MAGIC) return "tmpfs";
    if (type === RAMFS_MAGIC) return "ramfs";
  } catch {
    // An unknown filesystem is not reported as volatile.
  }
  return undefined;
}
