/** The loggers unit tests hand to the code under test. */
import { createLogger, type Logger } from "../../lib/log/logger.ts";

/** A logger that writes nothing, for tests that assert on something else. */
export const quiet: Logger = createLogger({ verbosity: 0, sink: { write: () => {} } });
