/**
 * The agent's journal on a disk of its own that a chaos test can fill or
 * make read-only: a small tmpfs mounted (as root) over a temporary
 * directory, unmounted in the test's finally. Also what counts in those
 * tests: the volume names the journal held on disk, and the CreateVolume
 * calls the driver got for any other name (each one a volume sent without
 * its intent on disk).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ClusterNode } from "../cluster/cluster_node.ts";
import { waitFor } from "../cluster/wait.ts";

const FILLER = "filler";

/** A tmpfs of `size` (e.g. "64k") mounted on a new directory; the journal's path in it. */
export class JournalDisk implements AsyncDisposable {
  readonly dir: string;
  readonly journal: string;
  /** Every volume name seen in a put line of the journal so far. */
  readonly seen = new Set<string>();

  private constructor(dir: string) {
    this.dir = dir;
    this.journal = join(dir, "journal.json");
  }

  static async mount(size: string): Promise<JournalDisk> {
    const dir = mkdtempSync(join(tmpdir(), "chaos-journal-"));
    await run("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0755`, "tmpfs", dir]);
    return new JournalDisk(dir);
  }

  /**
   * An ext4 file system in an image file, mounted through a loop device with
   * errors=remount-ro: emergencyReadOnly() then turns it read-only under its
   * open files, as the kernel does after a disk error.
   */
  static async mountExt4(megabytes: number): Promise<JournalDisk> {
    const dir = mkdtempSync(join(tmpdir(), "chaos-journal-"));
    const disk = new JournalDisk(dir);
    writeFileSync(disk.#image, "");
    Deno.truncateSync(disk.#image, megabytes * 1024 * 1024);
    await run("mkfs.ext4", ["-q", "-F", disk.#image]);
    await disk.#mountImage();
    return disk;
  }

  get #image(): string {
    return `${this.dir}.img`;
  }

  async #mountImage(): Promise<void> {
    await run("mount", ["-o", "loop,errors=remount-ro", this.#image, this.dir]);
  }

  /** The kernel's answer to a disk error on an ext4 mounted errors=remount-ro. */
  async emergencyReadOnly(): Promise<void> {
    const source = await output("findmnt", ["-n", "-o", "SOURCE", this.dir]);
    writeFileSync(`/sys/fs/ext4/${source.trim().replace("/dev/", "")}/trigger_fs_error`, "1");
  }

  /** Unmounts, checks and mounts the ext4 again, writable (nothing may hold files open on it). */
  async repair(): Promise<void> {
    await run("umount", [this.dir]);
    // Exit code 1: errors were corrected.
    await run("e2fsck", ["-fy", this.#image], [0, 1]);
    await this.#mountImage();
  }

  /** Fills the disk to the last byte (a file of the free space, then single bytes). */
  fill(): void {
    const path = join(this.dir, FILLER);
    for (const chunk of [4096, 1]) {
      while (true) {
        try {
          writeFileSync(path, Buffer.alloc(chunk), { flag: "a" });
        } catch {
          break;
        }
      }
    }
  }

  /**
   * Keeps the disk full, as a node whose disk another process fills: space
   * the journal frees (a truncated temporary file) is taken again at once.
   */
  async keepFull(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      this.fill();
      this.namesOnDisk();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Frees what fill() took. */
  free(): void {
    rmSync(join(this.dir, FILLER), { force: true });
  }

  async readOnly(on: boolean): Promise<void> {
    await run("mount", ["-o", `remount,${on ? "ro" : "rw"}`, this.dir]);
  }

  /** Every volume name the journal file names in a put line now. */
  namesOnDisk(): Set<string> {
    const names = new Set<string>();
    let text = "";
    try {
      text = readFileSync(this.journal, "utf8");
    } catch {
      return names;
    }
    for (const line of text.split("\n")) {
      try {
        const name = (JSON.parse(line) as { put?: { pvName?: string } }).put?.pvName;
        if (name === undefined) continue;
        names.add(name);
        this.seen.add(name);
      } catch {
        // The header, or a last line cut short.
      }
    }
    return names;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await waitFor(async () => (await run("umount", [this.dir]).then(() => true, () => false)), {
      description: `umount ${this.dir}`,
      timeoutMs: 10_000,
      intervalMs: 200,
    });
    rmSync(this.dir, { recursive: true, force: true });
    rmSync(this.#image, { force: true });
  }
}

/** The volume names of the node's CreateVolume calls. */
export async function createVolumeNames(node: ClusterNode): Promise<string[]> {
  return (await node.calls("CreateVolume")).map((call) =>
    (call.request as { name?: string }).name ?? ""
  );
}

/**
 * The volumes the journal's rule allows to be created: each name seen on
 * disk (sampled while the disk is kept full, and now), or asked of the
 * driver before (a retry of a durable intent).
 */
export function allowedNames(disk: JournalDisk, before: string[]): Set<string> {
  disk.namesOnDisk();
  return new Set([...disk.seen, ...before]);
}

async function run(command: string, args: string[], codes = [0]): Promise<void> {
  await output(command, args, codes);
}

async function output(command: string, args: string[], codes = [0]): Promise<string> {
  const result = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" })
    .output();
  if (!codes.includes(result.code)) {
    throw new Error(`${command} ${args.join(" ")}: ${new TextDecoder().decode(result.stderr)}`);
  }
  return new TextDecoder().decode(result.stdout);
}
