/**
 * Reading klog's output formats back, as a log pipeline would: text records
 * (header, quoted message, key=value pairs, multi-line blocks) and JSON
 * records (component-base's keys). Used to compare the lines of this agent
 * and of upstream csi-provisioner.
 */

/** klog's text header `Lmmdd hh:mm:ss.uuuuuu pid file:line] `. */
const HEADER = /^([IWEF])(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6}) +(\d+) ([^ \]]+):(\d+)\] /;

export interface TextRecord {
  severity: string;
  pid: number;
  source: string;
  /** The rest after the header, continuation lines included. */
  body: string;
}

/** Text records: a header line and the lines of its multi-line values. */
export function textRecords(log: string): { records: TextRecord[]; strays: string[] } {
  const records: TextRecord[] = [];
  const strays: string[] = [];
  for (const line of log.split("\n")) {
    const header = HEADER.exec(line);
    if (header !== null) {
      records.push({
        severity: header[1]!,
        pid: Number(header[8]),
        source: `${header[9]}:${header[10]}`,
        body: line.slice(header[0].length),
      });
    } else if (/^(\t| >)/.test(line) && records.length > 0) {
      records.at(-1)!.body += `\n${line}`;
    } else if (line !== "") {
      strays.push(line);
    }
  }
  return { records, strays };
}

/** A Go-quoted string at the start of `text`: its length, or -1. */
function quotedLength(text: string): number {
  const match = /^"(?:[^"\\\n]|\\.)*"/.exec(text);
  return match === null ? -1 : match[0].length;
}

/** A JSON value at the start of `text` (klog's non-string values): its length, or -1. */
function jsonLength(text: string): number {
  // The longest prefix up to a space or the end that parses as JSON.
  for (let end = text.length; end > 0; end = text.lastIndexOf(" ", end - 1)) {
    try {
      JSON.parse(text.slice(0, end));
      return end;
    } catch {
      if (end <= 0) break;
    }
  }
  return -1;
}

function valueLength(text: string): number {
  if (text.startsWith("<\n")) {
    const end = text.indexOf("\n >");
    return end < 0 ? -1 : end + 3;
  }
  if (text.startsWith('"')) return quotedLength(text);
  return jsonLength(text);
}

/**
 * A structured record's body, `"msg" key=value ...`, as message and pairs;
 * undefined when the body is not in that form (upstream's printf-style
 * lines, klog.Infof, are plain text).
 */
export function structuredBody(
  body: string,
): { msg: string; pairs: [string, string][] } | undefined {
  const msgLength = quotedLength(body);
  if (msgLength < 0) return undefined;
  const msg = JSON.parse(body.slice(0, msgLength)) as string;
  const pairs: [string, string][] = [];
  let rest = body.slice(msgLength);
  while (rest !== "") {
    const key = /^ ([A-Za-z0-9_.\-/]+)=/.exec(rest);
    if (key === null) return undefined;
    rest = rest.slice(key[0].length);
    const length = valueLength(rest);
    if (length < 0) return undefined;
    pairs.push([key[1]!, rest.slice(0, length)]);
    rest = rest.slice(length);
  }
  return { msg, pairs };
}

/** JSON records: one object per line. */
export function jsonRecords(log: string): { records: Record<string, unknown>[]; strays: string[] } {
  const records: Record<string, unknown>[] = [];
  const strays: string[] = [];
  for (const line of log.split("\n")) {
    if (line === "") continue;
    try {
      const value = JSON.parse(line);
      if (value !== null && typeof value === "object" && !Array.isArray(value)) records.push(value);
      else strays.push(line);
    } catch {
      strays.push(line);
    }
  }
  return { records, strays };
}

/** The leading keys of a JSON record that component-base writes before the pairs. */
export function leadingKeys(record: Record<string, unknown>): string[] {
  const keys = Object.keys(record).filter((key) => key !== "caller");
  const end = keys.indexOf("msg");
  return end < 0 ? keys : keys.slice(0, end + 1);
}
