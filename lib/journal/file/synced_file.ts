/**
 * The journal's file on the node's disk, each write on disk when it returns
 * (SyncedFile; the Journal over it is ../file_journal.ts). Written two ways:
 * an append writes the new lines at the end through a handle kept open with
 * O_DSYNC, so the write returns once its data is on disk, as a write and an
 * fdatasync would, in one system call and one task of Bun's thread pool
 * instead of two: a crash during it leaves at most a cut-short last line,
 * which the reader drops (format.ts). A replacement writes the whole journal
 * to `<file>.tmp`, fsyncs it, renames it over the file and fsyncs the
 * directory, so that a crash at any instant leaves the old file or the new
 * one, never a mix; its handle then serves the appends that follow.
 *
 * An append costs one system call where a replacement costs eight and
 * writes every live entry again, so appends are the rule and replacements
 * the exception. After any failed write the state of the file's end is not
 * known, so the next write must be a replacement.
 */
import { Buffer } from "node:buffer";
import { constants } from "node:fs";
import { type FileHandle, open, rename } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Every write through a journal handle is on disk when it returns (O_DSYNC);
 * a replacement's temporary file is written through such a handle too, since
 * that handle then serves the appends that follow.
 */
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT |
  constants.O_DSYNC;
const REPLACE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC |
  constants.O_DSYNC;

/**
 * The steps of a write, in order (a crash test stops the process after each).
 * An append's two steps follow its one write: with O_DSYNC it is on disk once
 * written, and "synced" stays the step after which the append is complete.
 */
export type WriteStep =
  | "appended"
  | "synced"
  | "tmp-written"
  | "tmp-synced"
  | "renamed"
  | "dir-synced";

/** Called after each step of every write: a seam for crash tests. */
export type AfterStep = (step: WriteStep) => Promise<void> | void;

/** The journal's file: its size and the handle that appends to it. */
export class SyncedFile {
  readonly path: string;
  readonly #afterStep: AfterStep;
  #handle: FileHandle | undefined;
  #bytes = 0;
  #mustReplace = true;

  private constructor(path: string, afterStep: AfterStep | undefined) {
    this.path = path;
    this.#afterStep = afterStep ?? (() => {});
  }

  /** A file whose first write will replace whatever is at `path` (missing or to be repaired). */
  static toReplace(path: string, afterStep?: AfterStep): SyncedFile {
    return new SyncedFile(path, afterStep);
  }

  /** The good file at `path`, `bytes` long, ready for appends. */
  static async forAppends(
    path: string,
    options: { bytes: number; afterStep?: AfterStep | undefined },
  ): Promise<SyncedFile> {
    const file = new SyncedFile(path, options.afterStep);
    file.#handle = await open(path, APPEND_FLAGS, 0o600);
    file.#bytes = options.bytes;
    file.#mustReplace = false;
    return file;
  }

  /** The file's size in bytes, as this process wrote it. */
  get bytes(): number {
    return this.#bytes;
  }

  /** True until a replacement succeeds, after the start or any failed write. */
  get mustReplace(): boolean {
    return this.#mustReplace;
  }

  /** Writes `text` at the end and waits until it is on disk. */
  async append(text: string): Promise<void> {
    if (this.#mustReplace || this.#handle === undefined) {
      throw new Error(`the journal ${this.path} must be replaced before it is appended to`);
    }
    this.#mustReplace = true;
    const written = await writeAll(this.#handle, text);
    await this.#afterStep("appended");
    await this.#afterStep("synced");
    this.#bytes += written;
    this.#mustReplace = false;
  }

  /** Replaces the file by one holding `text`, atomically, and appends to that one from now on. */
  async replace(text: string): Promise<void> {
    this.#mustReplace = true;
    const tmp = `${this.path}.tmp`;
    // Its handle then appends by writing at its offset, which every write moves to the end.
    const file = await open(tmp, REPLACE_FLAGS, 0o600);
    try {
      const written = await writeAll(file, text);
      await this.#afterStep("tmp-written");
      await file.sync();
      await this.#afterStep("tmp-synced");
      await rename(tmp, this.path);
      await this.#afterStep("renamed");
      await syncDirectory(dirname(this.path));
      await this.#afterStep("dir-synced");
      await this.#handle?.close();
      this.#handle = file;
      this.#bytes = written;
      this.#mustReplace = false;
    } catch (error) {
      await file.close();
      throw error;
    }
  }

  /** Closes the handle; a later write replaces the file. */
  async close(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    this.#mustReplace = true;
    await handle?.close();
  }
}

/** Writes all of `text`; a short write (a full disk) is an error, not a silent cut. */
async function writeAll(handle: FileHandle, text: string): Promise<number> {
  const bytes = Buffer.from(text, "utf8");
  const { bytesWritten } = await handle.write(bytes);
  if (bytesWritten !== bytes.length) {
    throw new Error(`wrote ${bytesWritten} of ${bytes.length} bytes`);
  }
  return bytesWritten;
}

/** Makes a rename in `directory` durable. */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
