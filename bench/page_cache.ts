/**
 * The page cache of an agent's executable, put in one state before each start.
 *
 * Why: part of a process's RSS is the pages of its executable it has mapped,
 * and how many a fault maps depends on how the file sits in the page cache:
 * the kernel maps a whole cached folio (Linux 6.x file systems cache large
 * folios), and folio sizes follow the file's history (written by the
 * compiler, copied, read back by readahead). Measured: the same binary read
 * 47.9 MiB of file pages 10 s after ready as an older file and 52.5 MiB as a
 * fresh copy, while its anonymous memory was 21.1 MiB both times. So before
 * every start the file is dropped from the page cache and read back whole,
 * alike for ours and upstream: the state of a node that has just pulled the
 * image, and the same at every start (both copies then read 79.1 MiB).
 * Read whole, a binary is cached in large folios and a process maps more of
 * it: upstream's file pages went from 46 MiB (of its 66.5 MB binary) to 66.
 */

/** Drops `path` from the page cache, then reads it whole, sequentially. */
export async function rereadIntoPageCache(path: string): Promise<void> {
  // GNU dd: with iflag=nocache and count=0 it asks the kernel to drop the
  // whole file's cached pages (posix_fadvise POSIX_FADV_DONTNEED); pages a
  // running process has mapped stay.
  const drop = await new Deno.Command("dd", {
    args: [`if=${path}`, "iflag=nocache", "count=0", "status=none"],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (drop.code !== 0) {
    throw new Error(
      `dropping ${path} from the page cache failed: ${new TextDecoder().decode(drop.stderr)}`,
    );
  }
  const file = await Deno.open(path);
  for await (const _chunk of file.readable) {
    // Reading is the point.
  }
}
