/**
 * The root logger: pino, with klog's verbosity mapped to levels and its lines
 * written in klog's text or JSON format (lib/log/klog.ts). Components get
 * child loggers; nothing here runs at import time.
 */
import pino from "pino";
import { formatJson, formatText, type LogFormat, type LogRecord, SEVERITIES } from "./klog.ts";

/** Our logger: pino's levels plus `notice`, the important events printed at -v=0 and -v=1. */
export type Logger = pino.Logger<"notice">;

/** Where log lines go (stderr by default); tests pass a collecting stream. */
interface LogSink {
  write(line: string): void;
}

/** Level between info and warn: start-up summary, shutdown, fatal conditions explained. */
const NOTICE_LEVEL = 35;

const STRIPPED = "***stripped***";

/** The levels below warn, most verbose first. */
const VERBOSE_LEVELS = ["trace", "debug", "info", "notice"] as const;

/**
 * Maps klog's -v to pino's threshold: the most verbose level whose klog V is
 * at most -v (lib/log/klog.ts: notice V(0), info V(2), debug V(4), trace V(6)).
 */
export function levelForVerbosity(verbosity: number): "notice" | "info" | "debug" | "trace" {
  return VERBOSE_LEVELS.find((level) => (SEVERITIES[level]?.v ?? 0) <= verbosity) ?? "notice";
}

/** Options of createLogger(). */
interface LoggerOptions {
  verbosity: number;
  /**
   * klog's text or JSON lines (--logging-format). Left out, the sink gets
   * pino's own JSON records (level names, ISO time, serialized errors): for
   * tests that read fields.
   */
  format?: LogFormat;
  sink?: LogSink;
  /** Pairs on every line. */
  base?: Record<string, string>;
}

// A second line of defence: CSI messages are sanitized before they are logged (lib/csi/sanitize.ts).
const REDACT = {
  paths: ["secrets", "*.secrets", "*.*.secrets", "data", "*.data", "stringData", "*.stringData"],
  censor: STRIPPED,
};

/** Creates the root logger. */
export function createLogger(options: LoggerOptions): Logger {
  const level = levelForVerbosity(options.verbosity);
  // `dest`, not `fd`: pino.destination() reads `dest` and, without it, evaluates
  // process.stdout.fd (pino.js, destination()), which under Bun builds the
  // stdout stream at start-up for a logger that never writes to it.
  const sink = options.sink ?? pino.destination({ dest: 2, sync: true });
  if (options.format === undefined) {
    return pino<"notice">({
      level,
      customLevels: { notice: NOTICE_LEVEL },
      base: { pid: process.pid, ...options.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: REDACT,
    }, sink);
  }
  const klog = new KlogSink(options.format, sink);
  return pino<"notice">({
    level,
    customLevels: { notice: NOTICE_LEVEL },
    base: { ...options.base },
    // JavaScript's wall clock has millisecond resolution: klog's microseconds end in 000.
    timestamp: () => `,"time":${Date.now()}`,
    formatters: {
      level: (label) => ({ level: label }),
      log: (object) => klog.noteCall(object),
    },
    // klog writes an error as its Error() text; Go's wrapped errors read "outer: inner".
    serializers: { err: errorText },
    redact: REDACT,
  }, klog);
}

/** An Error's message followed by those of its causes; anything else as it is. */
export function errorText(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  let text = value.message;
  for (let cause = value.cause; cause instanceof Error; cause = cause.cause) {
    text += `: ${cause.message}`;
  }
  return text;
}

/**
 * pino's destination for the klog formats: reads back each JSON record pino
 * wrote (secrets already redacted) and writes it as a klog line. pino builds
 * a record from a child logger's bindings and then the call's own object;
 * formatters.log hands that object over just before the record is written
 * (both happen within the one log call), so the two can be told apart.
 */
class KlogSink {
  readonly #format: (record: LogRecord) => string;
  readonly #out: LogSink;
  #call: object | undefined;

  constructor(format: LogFormat, out: LogSink) {
    this.#format = format === "text" ? (record) => formatText(record, process.pid) : formatJson;
    this.#out = out;
  }

  noteCall(object: Record<string, unknown>): Record<string, unknown> {
    this.#call = object;
    return object;
  }

  write(line: string): void {
    const call = this.#call;
    this.#call = undefined;
    this.#out.write(this.#format(toRecord(JSON.parse(line), call)));
  }
}

function toRecord(parsed: Record<string, unknown>, call: object | undefined): LogRecord {
  const fields: [string, unknown][] = [];
  let callStart = -1;
  let logger: string | undefined;
  for (const [key, value] of Object.entries(parsed)) {
    if (key === "level" || key === "time" || key === "msg") continue;
    // A child logger's component is klog's logger name (logr's WithName).
    if (key === "component") {
      logger = String(value);
      continue;
    }
    if (callStart < 0 && call !== undefined && Object.hasOwn(call, key)) callStart = fields.length;
    fields.push([key, value]);
  }
  return {
    level: String(parsed["level"]),
    time: Number(parsed["time"]),
    msg: typeof parsed["msg"] === "string" ? parsed["msg"] : "",
    logger,
    fields,
    callStart: callStart < 0 ? fields.length : callStart,
  };
}
