import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  FIRST_RETRY,
  GoneError,
  nextRetry,
  type Pass,
  passOfError,
  WatchEventError,
} from "./retry.ts";
import { KubeApiError } from "../rest/types.ts";

const healthy: Pass = { reason: "stream_end", healthy: true };
const short: Pass = { reason: "stream_end", healthy: false };
const idle: Pass = { reason: "idle_timeout" };
const gone: Pass = { reason: "expired" };
const refused: Pass = { reason: "error", error: new Error("connection refused") };
const forbidden: Pass = { reason: "error", error: new KubeApiError(403, "Forbidden", "no") };
const watchError: Pass = { reason: "error", error: new WatchEventError("watch error: x") };

/** Each row: the passes in order (lasted: the pass's stream lasted), the waits after each. */
const TABLE: { name: string; passes: [Pass, boolean][]; waits: (number | "now")[] }[] = [
  {
    name: "failures in a row double the wait up to the cap",
    passes: [[refused, false], [refused, false], [refused, false], [refused, false]],
    waits: [100, 200, 400, 400],
  },
  {
    name: "a healthy stream end goes on at once and starts over",
    passes: [[refused, false], [refused, false], [healthy, true], [refused, false]],
    waits: [100, 200, "now", 100],
  },
  {
    name: "a failure after a stream that lasted is a first failure",
    passes: [[short, false], [short, false], [idle, true], [short, false]],
    waits: [100, 200, 100, 200],
  },
  {
    name: "a first 410 waits the base delay; 410s in a row escalate",
    passes: [[refused, false], [refused, false], [gone, false], [gone, false], [gone, false]],
    waits: [100, 200, 100, 200, 400],
  },
  {
    name: "an answer after lost connections starts over once until the next progress",
    passes: [[refused, false], [refused, false], [forbidden, false], [refused, false], [
      forbidden,
      false,
    ]],
    waits: [100, 200, 100, 200, 400],
  },
  {
    name: "progress makes the next answer after lost connections start over again",
    passes: [[refused, false], [forbidden, false], [healthy, true], [refused, false], [
      watchError,
      false,
    ]],
    waits: [100, 100, "now", 100, 100],
  },
];

for (const row of TABLE) {
  Deno.test(`nextRetry(): ${row.name}`, () => {
    let state = FIRST_RETRY;
    const waits: (number | "now")[] = [];
    for (const [pass, lasted] of row.passes) {
      const next = nextRetry(state, { pass, lasted }, {
        bounds: { baseMs: 100, maxMs: 400 },
        random: () => 0,
      });
      state = next.state;
      waits.push(next.decision.wait ? next.decision.delayMs : "now");
    }
    deepStrictEqual(waits, row.waits);
  });
}

Deno.test("nextRetry() jitters the wait below its bound, never above", () => {
  const next = nextRetry(FIRST_RETRY, { pass: refused, lasted: false }, {
    bounds: { baseMs: 100, maxMs: 400 },
    random: () => 1,
  });
  strictEqual(next.decision.wait && next.decision.delayMs < 100, true);
});

Deno.test("passOfError(): a 410, as an answer or a watch event, is a relist; the rest errors", () => {
  deepStrictEqual(passOfError(new GoneError("watch expired")), { reason: "expired" });
  deepStrictEqual(passOfError(new KubeApiError(410, "Gone", "too old")), { reason: "expired" });
  const error = new KubeApiError(500, "InternalError", "boom");
  deepStrictEqual(passOfError(error), { reason: "error", error });
});
