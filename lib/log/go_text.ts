/**
 * How klog's text format writes values, in Go's own notation: strings quoted
 * as Go's strconv.Quote does, multi-line strings as an indented block, and
 * everything else as encoding/json writes it (k8s.io/klog/v2
 * internal/serialize: KVFormat, writeStringValue, formatAsJSON).
 */

/** Printable ASCII but `"` and `\`: such a string is quoted as it is. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const SHORT_ESCAPES: Record<string, string> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
  '"': '\\"',
  "\\": "\\\\",
};

function hex(codePoint: number, digits: number): string {
  return codePoint.toString(16).padStart(digits, "0");
}

function escapeRune(rune: string): string {
  const short = SHORT_ESCAPES[rune];
  if (short !== undefined) return short;
  const codePoint = rune.codePointAt(0) ?? 0;
  // A lone UTF-16 surrogate reaches the output as U+FFFD, which Go prints as it is.
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) return "\ufffd";
  if (PRINTABLE.test(rune)) return rune;
  if (codePoint < 0x20 || codePoint === 0x7f) return `\\x${hex(codePoint, 2)}`;
  if (codePoint < 0x10000) return `\\u${hex(codePoint, 4)}`;
  return `\\U${hex(codePoint, 8)}`;
}

/** Go's strconv.Quote: a double-quoted string with Go escapes for what is not printable. */
export function goQuote(text: string): string {
  if (PLAIN_ASCII.test(text)) return `"${text}"`;
  let quoted = '"';
  for (const rune of text) quoted += escapeRune(rune);
  return quoted + '"';
}

/**
 * `=` and a string value: quoted on one line, or, when it has line breaks,
 * each line indented by a tab between `=<` and ` >` (klog's writeStringValue).
 */
export function stringValue(text: string): string {
  if (!text.includes("\n")) return `=${goQuote(text)}`;
  const lines = text.split("\n");
  const last = lines.pop() ?? "";
  const body = lines.map((line) => `\t${line}\n`).join("");
  // A value ending in a line break gets no extra one before the end marker.
  return last === "" ? `=<\n${body} >` : `=<\n${body}\t${last}\n >`;
}

const HTML_ESCAPES: Record<string, string> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

/** JSON as Go's encoding/json writes it by default: with <, >, & and U+2028/9 escaped. */
export function goJson(value: unknown): string {
  const json = JSON.stringify(value) ?? "null";
  return json.replace(/[<>&\u2028\u2029]/g, (char) => HTML_ESCAPES[char] ?? char);
}

/** `=` and any value as klog's text format writes it after its key. */
export function textValue(value: unknown): string {
  return typeof value === "string" ? stringValue(value) : `=${goJson(value)}`;
}
