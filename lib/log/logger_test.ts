import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createLogger, levelForVerbosity } from "./logger.ts";

function collect(verbosity: number) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    verbosity,
    sink: { write: (line) => lines.push(JSON.parse(line)) },
  });
  return { logger, lines };
}

Deno.test("levelForVerbosity() maps klog's -v to levels", () => {
  deepStrictEqual(
    [0, 1, 2, 3, 4, 5, 6, 10].map(levelForVerbosity),
    ["notice", "notice", "info", "info", "debug", "debug", "trace", "trace"],
  );
});

Deno.test("at -v=0 only notices and warnings are written, as JSON lines with level names", () => {
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

Deno.test("at -v=5 debug lines are written and at -v=6 trace lines", () => {
  const five = collect(5);
  five.logger.debug("csi call");
  five.logger.trace("detail");
  strictEqual(five.lines.length, 1);
  const six = collect(6);
  six.logger.trace("detail");
  strictEqual(six.lines.length, 1);
});

Deno.test("secrets are stripped from logged objects at any verbosity", () => {
  const { logger, lines } = collect(10);
  logger.debug({ request: { name: "pvc-1", secrets: { password: "hunter2" } } }, "CreateVolume");
  logger.child({ component: "x" }).trace({ secrets: { token: "t0ps3cret" } }, "y");
  const text = JSON.stringify(lines);
  ok(!text.includes("hunter2") && !text.includes("t0ps3cret"), text);
  ok(text.includes("***stripped***"));
});
