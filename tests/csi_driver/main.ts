/**
 * The standalone test CSI driver:
 *   deno task csi-driver -- --endpoint unix:///path/csi.sock --node-id node-a --capacity fast=10Gi
 * Exit codes: 0 after SIGTERM/SIGINT, 1 when it cannot start, 2 for bad flags.
 */
import process from "node:process";
import { pino } from "pino";
import { startDriver, type TestDriver } from "./driver.ts";
import { parseDriverFlags } from "./flags.ts";

export const EXIT_CANNOT_START = 1;
export const EXIT_BAD_FLAGS = 2;

/** Runs until SIGTERM or SIGINT; resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const outcome = parseDriverFlags(argv);
  if (outcome.kind === "help") {
    process.stdout.write(outcome.text + "\n");
    return 0;
  }
  if (outcome.kind === "invalid") {
    const lines = outcome.problems.map((problem) => `  - ${problem}`);
    process.stderr.write(
      `csi-driver: invalid command line:\n${lines.join("\n")}\n(--help lists the flags)\n`,
    );
    return EXIT_BAD_FLAGS;
  }
  const { config } = outcome;
  const logger = pino(
    { level: outcome.logLevel, base: { component: "test-csi-driver", node: config.nodeId } },
    pino.destination({ dest: 2, sync: true }),
  );
  let driver: TestDriver;
  try {
    driver = await startDriver(config, { logger });
  } catch (error: unknown) {
    logger.fatal({ err: error }, "cannot start");
    return EXIT_CANNOT_START;
  }
  const signal = await new Promise<string>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  logger.info({ signal }, "stopping");
  await driver.stop();
  return 0;
}

if (import.meta.main) {
  process.exit(await main(process.argv.slice(2)));
}
