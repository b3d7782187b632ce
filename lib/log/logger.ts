/**
 * The root logger: pino JSON lines on stderr, with klog's verbosity mapped to
 * levels. Components get child loggers; nothing here runs at import time.
 */
import pino from "pino";

/** Our logger: pino's levels plus `notice`, the important events printed at -v=0 and -v=1. */
export type Logger = pino.Logger<"notice">;

/** Where log lines go (stderr by default); tests pass a collecting stream. */
export interface LogSink {
  write(line: string): void;
}

/** Level between info and warn: start-up summary, shutdown, fatal conditions explained. */
const NOTICE_LEVEL = 35;

const STRIPPED = "***stripped***";

/**
 * Maps klog -v to a pino level: 0-1 notice (warnings and key events),
 * 2-3 info, 4-5 debug (every CSI call), 6+ trace.
 */
export function levelForVerbosity(verbosity: number): "notice" | "info" | "debug" | "trace" {
  if (verbosity >= 6) return "trace";
  if (verbosity >= 4) return "debug";
  if (verbosity >= 2) return "info";
  return "notice";
}

/** Creates the root logger. */
export function createLogger(
  options: { verbosity: number; sink?: LogSink; base?: Record<string, string> },
): Logger {
  const destination = options.sink ?? pino.destination({ fd: 2, sync: true });
  return pino<"notice">(
    {
      level: levelForVerbosity(options.verbosity),
      customLevels: { notice: NOTICE_LEVEL },
      base: { pid: process.pid, ...options.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // A second line of defence: CSI messages are sanitized before they are logged (lib/csi/sanitize.ts).
      redact: {
        paths: [
          "secrets",
          "*.secrets",
          "*.*.secrets",
          "data",
          "*.data",
          "stringData",
          "*.stringData",
        ],
        censor: STRIPPED,
      },
    },
    destination,
  );
}
