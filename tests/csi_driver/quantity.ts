/**
 * Byte sizes written as Kubernetes quantities ("10Gi", "500Mi", "1G", "1.5Gi",
 * "2e9", plain bytes), parsed by the agent's own lib/model/quantity.ts. The
 * driver keeps sizes as plain numbers, so it accepts up to 2^53-1 bytes.
 */
import { parseQuantity } from "../../lib/model/quantity.ts";

export type ByteQuantity = { ok: true; bytes: number } | { ok: false; problem: string };

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

/** Parses a size; the problem text names the offending input. */
export function parseByteQuantity(text: string): ByteQuantity {
  const trimmed = text.trim();
  const parsed = parseQuantity(trimmed);
  // Kubernetes reads a bare suffix ("Gi") as 0; for a pool size that is a typo, not a size.
  if (!parsed.ok || parsed.value < 0n || !/^\+?(\d|\.\d)/.test(trimmed)) {
    return { ok: false, problem: `"${text}" is not a size (examples: 10Gi, 500Mi, 1G, 1048576)` };
  }
  if (parsed.value > BigInt(Number.MAX_SAFE_INTEGER)) {
    return { ok: false, problem: `"${text}" is larger than ${Number.MAX_SAFE_INTEGER} bytes` };
  }
  return { ok: true, bytes: Number(parsed.value) };
}

/** Accepts bytes as a number or a quantity string; throws with the problem otherwise. */
export function toBytes(size: number | string): number {
  if (typeof size === "number") {
    if (Number.isSafeInteger(size) && size >= 0) return size;
    throw new RangeError(`${size} is not a whole, non-negative number of bytes`);
  }
  const parsed = parseByteQuantity(size);
  if (!parsed.ok) throw new RangeError(parsed.problem);
  return parsed.bytes;
}
