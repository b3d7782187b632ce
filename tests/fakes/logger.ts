/** The loggers unit tests hand to the code under test. */
import type { LogFormat } from "../../lib/log/klog.ts";
import { createLogger, type Logger } from "../../lib/log/logger.ts";

/** A logger that writes nothing, for tests that assert on something else. */
export const quiet: Logger = createLogger({ verbosity: 0, sink: { write: () => {} } });

/**
 * A logger whose lines the test reads back in `lines`: pino's JSON records
 * unless a klog `format` is asked for.
 */
export function capturing(
  verbosity: number,
  format?: LogFormat,
): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = { write: (line: string) => void lines.push(line) };
  const logger = createLogger({ verbosity, sink, ...(format === undefined ? {} : { format }) });
  return { logger, lines };
}
