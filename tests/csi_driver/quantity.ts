/**
 * Byte sizes written as Kubernetes quantities ("10Gi", "500Mi", "1G", "1.5Gi",
 * "2e9", plain bytes). Fractions round up to a whole byte, as
 * resource.Quantity.Value() does.
 */

export type ByteQuantity = { ok: true; bytes: number } | { ok: false; problem: string };

const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};

/** Decimal suffixes as powers of ten. */
const DECIMAL: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

const QUANTITY = /^\+?(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

/** Parses a size; the problem text names the offending input. */
export function parseByteQuantity(text: string): ByteQuantity {
  const match = QUANTITY.exec(text.trim());
  if (match === null || match[1] === undefined) {
    return { ok: false, problem: `"${text}" is not a size (examples: 10Gi, 500Mi, 1G, 1048576)` };
  }
  const [whole = "", fraction = ""] = match[1].split(".");
  const digits = BigInt(`${whole}${fraction}` || "0");
  const suffix = match[2] ?? "";
  let numerator = digits * (BINARY[suffix] ?? 1n);
  let exponent = -fraction.length;
  if (BINARY[suffix] === undefined) {
    exponent += /^[eE]/.test(suffix) ? Number(suffix.slice(1)) : DECIMAL[suffix] ?? 0;
  }
  if (exponent > 40) return tooLarge(text);
  let denominator = 1n;
  if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
  else denominator = 10n ** BigInt(-exponent);
  const bytes = (numerator + denominator - 1n) / denominator;
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) return tooLarge(text);
  return { ok: true, bytes: Number(bytes) };
}

function tooLarge(text: string): ByteQuantity {
  return { ok: false, problem: `"${text}" is larger than ${Number.MAX_SAFE_INTEGER} bytes` };
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
