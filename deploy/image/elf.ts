/**
 * The two facts of an ELF executable the image needs: its machine (which
 * platform it is for) and its program interpreter (the dynamic loader the
 * kernel starts it with, at the path the image must hold it).
 */

const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46];
const ELFCLASS64 = 2;
const ELFDATA2LSB = 1;
const PT_INTERP = 3;

/** e_machine values of the platforms we build for. */
export const EM_X86_64 = 62;
export const EM_AARCH64 = 183;

export interface ElfFacts {
  machine: number;
  /** PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2; undefined for a static executable. */
  interpreter: string | undefined;
}

/** Reads a 64-bit little-endian ELF header and program headers; throws for anything else. */
export function readElfFacts(bytes: Uint8Array, name = "file"): ElfFacts {
  if (!ELF_MAGIC.every((byte, index) => bytes[index] === byte)) {
    throw new Error(`${name} is not an ELF executable`);
  }
  if (bytes[4] !== ELFCLASS64 || bytes[5] !== ELFDATA2LSB) {
    throw new Error(`${name} is not a 64-bit little-endian ELF executable`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const machine = view.getUint16(18, true);
  const programHeaders = Number(view.getBigUint64(32, true));
  const entrySize = view.getUint16(54, true);
  const count = view.getUint16(56, true);
  for (let index = 0; index < count; index++) {
    const at = programHeaders + index * entrySize;
    if (view.getUint32(at, true) !== PT_INTERP) continue;
    const offset = Number(view.getBigUint64(at + 8, true));
    const size = Number(view.getBigUint64(at + 32, true));
    // The path is NUL-terminated within the segment.
    const path = new TextDecoder().decode(bytes.subarray(offset, offset + size));
    return { machine, interpreter: path.replace(/\0.*$/s, "") };
  }
  return { machine, interpreter: undefined };
}

/** The ELF facts of a file on disk (only its first 64 KiB are read). */
export async function elfFactsOfFile(path: string): Promise<ElfFacts> {
  using file = await Deno.open(path, { read: true });
  const head = new Uint8Array(64 * 1024);
  let filled = 0;
  while (filled < head.length) {
    const read = await file.read(head.subarray(filled));
    if (read === null) break;
    filled += read;
  }
  return readElfFacts(head.subarray(0, filled), path);
}
