/**
 * Reads what a process appends to its log file from a given offset on, so
 * that a line is searched for only in this start's output.
 */
export class LogFollower {
  readonly path: string;
  #offset: number;
  /** Text read so far (only this start's part). */
  #text = "";
  /** Streaming: a character split across two reads is decoded whole. */
  readonly #decoder = new TextDecoder();

  constructor(path: string, offset: number) {
    this.path = path;
    this.#offset = offset;
  }

  /** Follows the file from its current end (0 when it does not exist yet). */
  static async fromEnd(path: string): Promise<LogFollower> {
    try {
      return new LogFollower(path, (await Deno.stat(path)).size);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return new LogFollower(path, 0);
      throw error;
    }
  }

  /** Reads what was appended since the last call; "" when nothing (or no file yet). */
  async readNew(): Promise<string> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.path, { read: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return "";
      throw error;
    }
    try {
      await file.seek(this.#offset, Deno.SeekMode.Start);
      const chunks: Uint8Array[] = [];
      const buffer = new Uint8Array(64 * 1024);
      while (true) {
        const read = await file.read(buffer);
        if (read === null || read === 0) break;
        chunks.push(buffer.slice(0, read));
        this.#offset += read;
      }
      const fresh = this.#decoder.decode(concat(chunks), { stream: true });
      this.#text += fresh;
      return fresh;
    } finally {
      file.close();
    }
  }

  /** Whether this start's output so far contains the text. */
  async contains(needle: string): Promise<boolean> {
    await this.readNew();
    return this.#text.includes(needle);
  }
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  const joined = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    joined.set(chunk, at);
    at += chunk.length;
  }
  return joined;
}
