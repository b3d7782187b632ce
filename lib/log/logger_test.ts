import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { LOG_FORMATS, type LogFormat } from "./klog.ts";
import { createLogger, errorText, levelForVerbosity, type Logger } from "./logger.ts";

function collect(verbosity: number) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    verbosity,
    sink: { write: (line) => lines.push(JSON.parse(line)) },
  });
  return { logger, lines };
}

function collectText(verbosity: number, format: LogFormat) {
  const lines: string[] = [];
  const logger = createLogger({ verbosity, format, sink: { write: (line) => lines.push(line) } });
  return { logger, lines };
}

Deno.test("levelForVerbosity() maps klog's -v to levels", () => {
  deepStrictEqual(
    [0, 1, 2, 3, 4, 5, 6, 10].map(levelForVerbosity),
    ["notice", "notice", "info", "info", "debug", "debug", "trace", "trace"],
  );
});

/** One line at each level, each message naming its level. */
function everyLevel(logger: Logger): void {
  logger.trace("trace");
  logger.debug("debug");
  logger.info("info");
  logger.notice("notice");
  logger.warn("warn");
  logger.error("error");
}

Deno.test("a line at V(n) is written when -v >= n, as klog does; warnings and errors always", () => {
  const expected: [string, number | undefined][] = [
    ["trace", 6],
    ["debug", 4],
    ["info", 2],
    ["notice", 0],
    ["warn", 0],
    ["error", undefined],
  ];
  for (let verbosity = 0; verbosity <= 7; verbosity++) {
    const { logger, lines } = collectText(verbosity, "json");
    everyLevel(logger);
    const written = lines.map((line) => JSON.parse(line)).map((line) => [line.msg, line.v]);
    deepStrictEqual(
      written,
      expected.filter(([, v]) => v === undefined || v <= verbosity),
      `-v=${verbosity}`,
    );
  }
});

Deno.test("text lines carry klog's severity letters: I, W, E and F", () => {
  const { logger, lines } = collectText(10, "text");
  everyLevel(logger);
  logger.fatal("fatal");
  deepStrictEqual(lines.map((line) => `${line[0]} ${line.split("] ")[1]?.trim()}`), [
    'I "trace"',
    'I "debug"',
    'I "info"',
    'I "notice"',
    'W "warn"',
    'E "error"',
    'F "fatal"',
  ]);
});

Deno.test("without a format the sink gets pino's records, with level names", () => {
  const { logger, lines } = collect(0);
  logger.info("routine");
  logger.notice("started");
  logger.warn("careful");
  deepStrictEqual(lines.map((line) => [line["level"], line["msg"]]), [
    ["notice", "started"],
    ["warn", "careful"],
  ]);
  strictEqual(typeof lines[0]?.["time"], "string");
});

Deno.test("secrets are stripped from logged objects in every format at any verbosity", () => {
  const secretLines = (logger: Logger) => {
    logger.debug({ request: { name: "pvc-1", secrets: { password: "hunter2" } } }, "CreateVolume");
    logger.child({ component: "x" }).trace({ secrets: { token: "t0ps3cret" } }, "y");
    logger.error({ secret: { data: { key: "s3cr3t" } } }, "Secret read");
    logger.warn({ object: { stringData: { key: "pl41n" } } }, "Secret object");
  };
  for (const format of [undefined, ...LOG_FORMATS]) {
    for (const verbosity of [0, 2, 4, 5, 6, 10]) {
      const lines: string[] = [];
      const logger = createLogger({
        verbosity,
        ...(format ? { format } : {}),
        sink: { write: (line) => lines.push(line) },
      });
      secretLines(logger);
      const text = lines.join("");
      for (const secret of ["hunter2", "t0ps3cret", "s3cr3t", "pl41n"]) {
        ok(!text.includes(secret), `${format ?? "records"} -v=${verbosity}: ${text}`);
      }
      ok(text.includes("***stripped***"), text);
    }
  }
});

Deno.test("errorText() is an error's message, then its causes', like Go's wrapped errors", () => {
  const error = new Error("saving PV", {
    cause: new Error("conflict", { cause: new Error("rv") }),
  });
  strictEqual(errorText(error), "saving PV: conflict: rv");
  strictEqual(errorText("plain"), "plain");
});
