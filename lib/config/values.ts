/**
 * Parsers for flag values with Go's syntax, so that manifests written for the
 * Go sidecar keep working unchanged. Each returns a value or an error string
 * (bad input is an expected outcome here, not an exception).
 */

/** Result of parsing one value. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(error: string): Parsed<T> => ({ ok: false, error });

/** strconv.ParseBool: 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False. */
export function parseGoBool(text: string): Parsed<boolean> {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(text)) return ok(true);
  if (["0", "f", "F", "FALSE", "false", "False"].includes(text)) return ok(false);
  return fail(`strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`);
}

/** strconv.ParseInt(text, 0, 64) restricted to safe integers: decimal, 0x, 0o, 0b, underscores. */
export function parseGoInt(text: string): Parsed<number> {
  const match = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|[0-9][0-9_]*)$/.exec(text);
  if (match === null) return fail(`parsing ${JSON.stringify(text)}: invalid syntax`);
  const digits = (match[2] ?? "").replaceAll("_", "");
  const magnitude = /^0[0-7]+$/.test(digits) ? Number.parseInt(digits, 8) : Number(digits);
  const value = match[1] === "-" ? -magnitude : magnitude;
  if (!Number.isSafeInteger(value)) {
    return fail(`parsing ${JSON.stringify(text)}: value out of range`);
  }
  return ok(value);
}

/** strconv.ParseFloat: decimal or exponent notation. */
export function parseGoFloat(text: string): Parsed<number> {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) {
    return fail(`parsing ${JSON.stringify(text)}: invalid syntax`);
  }
  return ok(Number(text));
}

const DURATION_UNITS_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  "μs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** time.ParseDuration, e.g. "1m30s", "300ms", "-1.5h", "0". Returns milliseconds. */
export function parseGoDuration(text: string): Parsed<number> {
  const invalid = fail<number>(`time: invalid duration ${JSON.stringify(text)}`);
  const sign = text.startsWith("-") ? -1 : 1;
  let rest = text.replace(/^[+-]/, "");
  if (rest === "0") return ok(0);
  if (rest === "") return invalid;
  let total = 0;
  while (rest !== "") {
    const match = /^(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/.exec(rest);
    if (match === null) {
      return /^(\d+\.?\d*|\.\d+)$/.test(rest)
        ? fail(`time: missing unit in duration ${JSON.stringify(text)}`)
        : invalid;
    }
    total += Number(match[1]) * (DURATION_UNITS_MS[match[2] ?? ""] ?? Number.NaN);
    rest = rest.slice(match[0].length);
  }
  return ok(sign * total);
}

/**
 * A comma-separated list of `key<sep>value` pairs, as component-base's
 * MapStringBool (`A=true,B=false`) and csi-lib-utils' label flag (`k:v`) take.
 */
export function parseKeyValueList(text: string, separator: "=" | ":"): Parsed<[string, string][]> {
  const pairs: [string, string][] = [];
  for (const item of text.split(",")) {
    if (item.trim() === "") continue;
    const at = item.indexOf(separator);
    if (at <= 0) {
      return fail(`missing ${JSON.stringify(separator)} in ${JSON.stringify(item.trim())}`);
    }
    pairs.push([item.slice(0, at).trim(), item.slice(at + 1).trim()]);
  }
  return ok(pairs);
}
