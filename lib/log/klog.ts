/**
 * klog's two output formats, written from one log record:
 * - text, as k8s.io/klog/v2 textlogger writes it (the default of every
 *   Kubernetes component): `I1123 09:28:15.123000       7 ???:1] "msg" key="value"`
 * - json, as k8s.io/component-base/logs/json writes it (zap through zapr):
 *   `{"ts":1763890095123,"logger":"provision","msg":"msg","v":2,"key":"value"}`
 * Pure functions: the record comes from lib/log/logger.ts.
 */
import { goQuote, textValue } from "./go_text.ts";

export type LogFormat = "text" | "json";
export const LOG_FORMATS: readonly LogFormat[] = ["text", "json"];

/** One log line before formatting. */
export interface LogRecord {
  /** pino's level label: trace, debug, info, notice, warn, error, fatal. */
  level: string;
  /** Milliseconds since the epoch. */
  time: number;
  msg: string;
  /** klog's logger name (WithName): the `component` of a child logger. */
  logger?: string | undefined;
  /** Key/value pairs in order: the logger's bindings first, then the call's. */
  fields: [string, unknown][];
  /** Index in `fields` where the call's own pairs begin. */
  callStart: number;
}

interface Severity {
  /** klog's severity letter. */
  letter: "I" | "W" | "E" | "F";
  /**
   * The klog verbosity a line of this level is logged at (V(n)): shown when
   * -v >= n. Errors have none: klog writes them at any -v.
   */
  v?: number;
}

/**
 * Our levels as klog severities and V levels. -v=N shows the levels whose V
 * is at most N (levelForVerbosity in logger.ts picks pino's threshold).
 */
export const SEVERITIES: Readonly<Record<string, Severity>> = {
  trace: { letter: "I", v: 6 },
  debug: { letter: "I", v: 4 },
  info: { letter: "I", v: 2 },
  notice: { letter: "I", v: 0 },
  // klog.Warning: a "W" line in text; through a logr logger (json) it is an
  // Info at V(0).
  warn: { letter: "W", v: 0 },
  error: { letter: "E" },
  // klog.Fatal writes an "F" line; component-base's JSON logs it as an error.
  fatal: { letter: "F" },
};

const UNKNOWN: Severity = { letter: "I", v: 0 };

function twoDigits(value: number): string {
  return value < 10 ? `0${value}` : `${value}`;
}

/**
 * klog's header `Lmmdd hh:mm:ss.uuuuuu threadid file:line] ` in local time,
 * as Go's time.Now() gives it. The caller is `???:1`, what klog writes when
 * it cannot tell the Go file and line: the agent has no Go source.
 */
function klogHeader(letter: string, time: number, pid: number): string {
  const date = new Date(time);
  const micros = `${Math.floor((time % 1000) * 1000)}`.padStart(6, "0");
  return `${letter}${twoDigits(date.getMonth() + 1)}${twoDigits(date.getDate())} ` +
    `${twoDigits(date.getHours())}:${twoDigits(date.getMinutes())}:` +
    `${twoDigits(date.getSeconds())}.${micros} ${`${pid}`.padStart(7, " ")} ???:1] `;
}

function isError(severity: Severity): boolean {
  return severity.v === undefined;
}

/**
 * A text line: header, the quoted message, then `err` (errors only, as
 * klog's ErrorS puts it first), the logger name and the pairs.
 */
export function formatText(record: LogRecord, pid: number): string {
  const severity = SEVERITIES[record.level] ?? UNKNOWN;
  let line = klogHeader(severity.letter, record.time, pid) + goQuote(record.msg);
  const errorFirst = isError(severity);
  if (errorFirst) {
    const err = record.fields.find(([key]) => key === "err");
    if (err !== undefined) line += ` err${textValue(err[1])}`;
  }
  if (record.logger !== undefined) line += ` logger${textValue(record.logger)}`;
  for (const [key, value] of record.fields) {
    if (errorFirst && key === "err") continue;
    line += ` ${key}${textValue(value)}`;
  }
  return line + "\n";
}

function jsonPair(key: string, value: unknown): string {
  return `,${JSON.stringify(key)}:${JSON.stringify(value) ?? "null"}`;
}

/**
 * A JSON line with zap's key order: ts, logger, msg, the logger's bindings
 * (zap's context fields), v (not on errors), the call's pairs, and on errors
 * `err` last, as zapr's Error adds it.
 */
export function formatJson(record: LogRecord): string {
  const severity = SEVERITIES[record.level] ?? UNKNOWN;
  let line = `{"ts":${record.time}`;
  if (record.logger !== undefined) line += jsonPair("logger", record.logger);
  line += jsonPair("msg", record.msg);
  let err: unknown;
  record.fields.forEach(([key, value], index) => {
    if (index === record.callStart && severity.v !== undefined) line += `,"v":${severity.v}`;
    if (isError(severity) && key === "err") err = value;
    else line += jsonPair(key, value);
  });
  if (record.callStart >= record.fields.length && severity.v !== undefined) {
    line += `,"v":${severity.v}`;
  }
  if (err !== undefined) line += jsonPair("err", err);
  return line + "}\n";
}
