/**
 * Kubernetes resource.Quantity for byte counts: parsing to an exact integer
 * (bigint) and printing the canonical BinarySI form the API server and
 * `kubectl` show. Ported from apimachinery's pkg/api/resource (quantity.go,
 * suffix.go, amount.go): the same grammar, the same error texts, the same
 * rounding up of fractional values that `Quantity.Value()` does.
 *
 * One deliberate difference: apimachinery silently caps DecimalSI and
 * BinarySI values at 2^63-1 and wraps beyond it in `Value()`. Here the
 * parsed value is exact, so the caller can reject sizes that do not fit an
 * int64 instead of provisioning a wrong size.
 */

/** Result of parsing a quantity. */
type QuantityParse = { ok: true; value: bigint } | { ok: false; error: string };

/** Largest int64: the biggest size a CSI request or a Kubernetes Quantity can carry. */
export const MAX_INT64 = (1n << 63n) - 1n;

/** apimachinery's ErrFormatWrong text (also used for the empty string). */
export const QUANTITY_FORMAT_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** apimachinery's ErrSuffix text. */
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

/** Our own limit: beyond 10^1000 nothing is a size; refusing avoids huge bigint work. */
export const QUANTITY_RANGE_ERROR = "quantity is too large (more than 1000 decimal digits)";

const DECIMAL_EXPONENTS: Readonly<Record<string, number>> = {
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

const BINARY_EXPONENTS: Readonly<Record<string, number>> = {
  Ki: 10,
  Mi: 20,
  Gi: 30,
  Ti: 40,
  Pi: 50,
  Ei: 60,
};

const BINARY_SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] as const;

const SUFFIX_CHARACTERS = "eEinumkKMGTP";
const MAX_DIGITS = 1000;

interface Scanned {
  negative: boolean;
  /** Integer digits without leading zeros ("0" when there are none). */
  num: string;
  /** Fraction digits, possibly empty. */
  denom: string;
  suffix: string;
}

/**
 * Parses a quantity such as "10Gi", "1.5G", "1e9", "1500m" into a whole
 * number, rounding fractions away from zero like `Quantity.Value()`.
 */
export function parseQuantity(text: string): QuantityParse {
  if (text === "") return { ok: false, error: QUANTITY_FORMAT_ERROR };
  const scanned = scanQuantity(text);
  if (scanned === undefined) return { ok: false, error: QUANTITY_FORMAT_ERROR };
  const digits = BigInt(scanned.num + scanned.denom);
  const binary = BINARY_EXPONENTS[scanned.suffix];
  let magnitude: bigint | undefined;
  if (binary !== undefined) {
    magnitude = divideRoundingUp(digits << BigInt(binary), 10n ** BigInt(scanned.denom.length));
  } else {
    const exponent = decimalExponent(scanned.suffix);
    if (exponent === undefined) return { ok: false, error: QUANTITY_SUFFIX_ERROR };
    magnitude = scaleDecimal(digits, exponent - scanned.denom.length);
    if (magnitude === undefined) return { ok: false, error: QUANTITY_RANGE_ERROR };
  }
  return { ok: true, value: scanned.negative ? -magnitude : magnitude };
}

/**
 * Prints a byte count the way `resource.NewQuantity(n, BinarySI).String()`
 * does: the largest binary suffix that divides exactly ("1Gi", "1536Ki"),
 * plain digits when none does ("1500"), and, below 1024, the DecimalSI form
 * (which turns exactly 1000 into "1k").
 */
export function formatBinarySI(bytes: bigint): string {
  if (bytes === 0n) return "0";
  const sign = bytes < 0n ? "-" : "";
  let mantissa = bytes < 0n ? -bytes : bytes;
  if (mantissa < 1024n) return sign + formatSmallDecimal(mantissa);
  let exponent = 0;
  while (exponent < BINARY_SUFFIXES.length - 1 && mantissa % 1024n === 0n) {
    mantissa /= 1024n;
    exponent++;
  }
  return `${sign}${mantissa}${BINARY_SUFFIXES[exponent]}`;
}

/** DecimalSI canonical form of 1..1023: factors of ten move into an exponent that is a multiple of 3. */
function formatSmallDecimal(value: bigint): string {
  let mantissa = value;
  let exponent = 0;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  const excess = exponent % 3;
  mantissa *= 10n ** BigInt(excess);
  exponent -= excess;
  return exponent === 3 ? `${mantissa}k` : `${mantissa}`;
}

/** The grammar of apimachinery's parseQuantityString, character for character. */
function scanQuantity(text: string): Scanned | undefined {
  const end = text.length;
  let pos = 0;
  let negative = false;
  if (text[0] === "-" || text[0] === "+") {
    negative = text[0] === "-";
    pos++;
  }
  while (pos < end && text[pos] === "0") pos++;
  const result: Scanned = { negative, num: "0", denom: "", suffix: "" };
  let start = pos;
  while (pos < end && isDigit(text[pos])) pos++;
  if (pos > start) result.num = text.slice(start, pos);
  if (pos < end && text[pos] === ".") {
    start = ++pos;
    while (pos < end && isDigit(text[pos])) pos++;
    result.denom = text.slice(start, pos);
  }
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARACTERS.includes(text[pos] ?? "")) pos++;
  if (pos < end && (text[pos] === "-" || text[pos] === "+")) pos++;
  while (pos < end && isDigit(text[pos])) pos++;
  if (pos < end) return undefined;
  result.suffix = text.slice(suffixStart);
  return result;
}

/** Power of ten of a decimal SI suffix or of an exponent suffix ("e9", "E-3"). */
function decimalExponent(suffix: string): number | undefined {
  const fixed = DECIMAL_EXPONENTS[suffix];
  if (fixed !== undefined) return fixed;
  const match = /^[eE]([+-]?\d+)$/.exec(suffix);
  if (match === null) return undefined;
  const exponent = Number(match[1]);
  // Go parses the exponent as int64; anything this large is out of range anyway.
  return Number.isSafeInteger(exponent) ? exponent : Math.sign(exponent) * Number.MAX_SAFE_INTEGER;
}

/** digits × 10^exponent, rounded up; undefined when absurdly large. */
function scaleDecimal(digits: bigint, exponent: number): bigint | undefined {
  if (digits === 0n) return 0n;
  const length = digits.toString().length;
  if (length + exponent > MAX_DIGITS) return undefined;
  if (exponent >= 0) return digits * 10n ** BigInt(exponent);
  // Below 10^-MAX_DIGITS the value is a tiny positive fraction, which rounds up to 1.
  if (length + exponent < -MAX_DIGITS) return 1n;
  return divideRoundingUp(digits, 10n ** BigInt(-exponent));
}

function divideRoundingUp(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

function isDigit(character: string | undefined): boolean {
  return character !== undefined && character >= "0" && character <= "9";
}
