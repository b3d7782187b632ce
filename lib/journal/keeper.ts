/**
 * The journal as the running agent holds it: it waits for the journal's lock
 * (another agent on the node may hold it), opens the file, retrying with
 * backoff while the file cannot be read or rewritten, and once open retries
 * a failed write until the disk takes writes again. None of this ever ends
 * the agent: deletion and capacity need no journal, and provisioning asks
 * the keeper whether it may create volumes (readiness says why not).
 *
 * Until the file is loaded its entries are unknown, so every record is
 * refused; once loaded, a failed write refuses records until one succeeds
 * (file_journal.ts), while clears of loaded entries go on in memory.
 */
import { jitteredDelay } from "../queue/backoff.ts";
import { sleep } from "../runtime/sleep.ts";
import { volatileFilesystem } from "./disk.ts";
import { type FileJournal, type FileJournalOptions, openFileJournal } from "./file_journal.ts";
import { type FileLock, lockPathOf, tryLockJournal } from "./lock.ts";

/** How often a second agent asks for the lock, and the backoff of opens and writes. */
interface KeeperTiming {
  lockPollMs: number;
  baseMs: number;
  maxMs: number;
}

const DEFAULT_TIMING: KeeperTiming = { lockPollMs: 1000, baseMs: 1000, maxMs: 30_000 };

/** The journal's lock, file and health, for the life of the agent. */
export class JournalKeeper<T> {
  readonly path: string;
  readonly #options: FileJournalOptions<T>;
  readonly #timing: KeeperTiming;
  readonly #lockFile: (path: string) => Promise<FileLock | undefined>;
  #journal: FileJournal<T> | undefined;
  #lock: FileLock | undefined;
  #waitingFor = "the intent journal is not opened yet";
  readonly #opened: Promise<void>;
  #markOpened: () => void = () => {};

  constructor(
    path: string,
    options: FileJournalOptions<T> & {
      timing?: Partial<KeeperTiming>;
      lockFile?: (path: string) => Promise<FileLock | undefined>;
    },
  ) {
    this.path = path;
    this.#options = options;
    this.#timing = { ...DEFAULT_TIMING, ...options.timing };
    this.#lockFile = options.lockFile ?? tryLockJournal;
    this.#opened = new Promise((resolve) => (this.#markOpened = resolve));
    options.metrics?.observeWritable(() => this.readiness() === true);
  }

  /** The open journal, undefined while it is not loaded. */
  get journal(): FileJournal<T> | undefined {
    return this.#journal;
  }

  /** True when new volumes may be recorded, else why not (with the path). */
  readiness(): true | string {
    if (this.#journal === undefined) return this.#waitingFor;
    const problem = this.#journal.writeProblem();
    return problem === undefined
      ? true
      : `cannot write the intent journal ${problem}: no volume is created until it can`;
  }

  /** Records an entry once on disk; refused while the journal is not loaded. */
  async record(entry: T): Promise<void> {
    if (this.#journal === undefined) throw new Error(this.#waitingFor);
    await this.#journal.record(entry);
  }

  clear(key: string, outcome: string): void {
    this.#journal?.clear(key, outcome);
  }

  /** See FileJournal.settling(). */
  settling(key: string): void {
    this.#journal?.settling(key);
  }

  entries(): T[] {
    return this.#journal?.entries() ?? [];
  }

  get(key: string): T | undefined {
    return this.#journal?.get(key);
  }

  entriesOf(group: string): T[] {
    return this.#journal?.entriesOf(group) ?? [];
  }

  get size(): number {
    return this.#journal?.size ?? 0;
  }

  /** Resolves true once the journal is loaded, false when `signal` aborts first. */
  async opened(signal: AbortSignal): Promise<boolean> {
    if (this.#journal !== undefined) return true;
    if (signal.aborted) return false;
    let stop = () => {};
    const aborted = new Promise<void>((resolve) => (stop = resolve));
    signal.addEventListener("abort", stop, { once: true });
    await Promise.race([this.#opened, aborted]);
    signal.removeEventListener("abort", stop);
    return this.#journal !== undefined;
  }

  /** Takes the lock, opens the journal, then heals failed writes, until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    if (!(await this.#takeLock(signal))) return;
    if (!(await this.#open(signal))) return;
    await this.#healWrites(this.#journal!, signal);
  }

  /** Closes the journal (writing its pending clears), then releases the lock. */
  async close(): Promise<void> {
    try {
      await this.#journal?.close();
    } finally {
      this.#lock?.release();
      this.#lock = undefined;
    }
  }

  async #takeLock(signal: AbortSignal): Promise<boolean> {
    const lockPath = lockPathOf(this.path);
    let failures = 0;
    let told = false;
    while (!signal.aborted) {
      let wait = this.#timing.lockPollMs;
      try {
        this.#lock = await this.#lockFile(this.path);
        if (this.#lock !== undefined) {
          if (told) this.#options.logger.notice({ lock: lockPath }, "Intent journal lock taken");
          return true;
        }
        this.#waitingFor = `waiting for the intent journal's lock ${lockPath}: another agent ` +
          `on this node holds it and writes ${this.path}`;
        if (!told) this.#options.logger.warn({ lock: lockPath }, this.#waitingFor);
        told = true;
      } catch (error) {
        this.#waitingFor = `cannot lock the intent journal (${lockPath}): ${errorMessage(error)}`;
        this.#options.logger.warn({ lock: lockPath, err: error }, this.#waitingFor);
        wait = jitteredDelay(failures++, this.#timing);
      }
      await sleep(wait, signal);
    }
    return false;
  }

  async #open(signal: AbortSignal): Promise<boolean> {
    for (let failures = 0; !signal.aborted; failures++) {
      try {
        this.#journal = await openFileJournal(this.path, this.#options);
        this.#options.logger.info(
          { journal: this.path, intents: this.#journal.size },
          "Intent journal opened",
        );
        await this.#warnIfVolatile();
        this.#markOpened();
        return true;
      } catch (error) {
        this.#waitingFor = `cannot open the intent journal ${this.path}: ${errorMessage(error)} ` +
          "(retrying; no volume is created until it opens)";
        this.#options.logger.warn({ journal: this.path, err: error }, this.#waitingFor);
        await sleep(jitteredDelay(failures, this.#timing), signal);
      }
    }
    return false;
  }

  async #warnIfVolatile(): Promise<void> {
    const filesystem = await volatileFilesystem(this.path);
    this.#options.metrics?.volatile(filesystem !== undefined);
    if (filesystem === undefined) return;
    this.#options.logger.warn(
      { journal: this.path, filesystem },
      `The intent journal ${this.path} is on ${filesystem}, in memory: a node reboot wipes it, ` +
        "and volumes being created then may be left behind; put --journal-path on the node's disk",
    );
  }

  /** Writes the journal again after a failed write, with backoff, until a write succeeds. */
  async #healWrites(journal: FileJournal<T>, signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (await sleep(failures === 0 ? this.#timing.lockPollMs : 0, signal)) {
      if (journal.writeProblem() === undefined) {
        failures = 0;
        continue;
      }
      try {
        await journal.flush();
        failures = 0;
        this.#options.logger.notice({ journal: this.path }, "Intent journal writable again");
      } catch {
        if (!(await sleep(jitteredDelay(failures++, this.#timing), signal))) return;
      }
    }
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
