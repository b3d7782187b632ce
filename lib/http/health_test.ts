import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { capturing } from "../../tests/fakes/logger.ts";
import { livenessReport, Readiness } from "./health.ts";

type LogRecord = { level: string; msg: string; condition?: string; reason?: string };

/** The logger's records so far. */
const parsed = (lines: string[]): LogRecord[] => lines.map((line) => JSON.parse(line));

Deno.test("livenessReport() is about the agent: a recent heartbeat and no loop that ended", () => {
  const loops = { running: 7, ended: [] as string[] };
  const sources = {
    heartbeat: () => ({ ageMs: 400, maxLagMs: 12.4 }),
    staleMs: 10_000,
    loops: () => loops,
  };
  deepStrictEqual(livenessReport(sources), {
    ok: true,
    lines: [
      "heartbeat: ok (0.4 s ago; event loop lag at most 12 ms in the last minute)",
      "loops: ok (7 running)",
    ],
  });
  const stale = livenessReport({ ...sources, heartbeat: () => ({ ageMs: 12_000, maxLagMs: 0 }) });
  deepStrictEqual(
    [stale.ok, stale.lines[0]],
    [false, "heartbeat: none for 12.0 s (limit 10.0 s)"],
  );
  loops.ended.push("claim workers");
  const dead = livenessReport(sources);
  deepStrictEqual([dead.ok, dead.lines[1]], [false, "loops: ended on their own: claim workers"]);
});

Deno.test("Readiness is ready only when every required condition is met", () => {
  const readiness = new Readiness();
  strictEqual(readiness.report().ok, false, "nothing registered is not ready");
  readiness.require("csi", "handshake not done");
  readiness.require("informers", "not synced");
  readiness.set("csi", true);
  deepStrictEqual(readiness.report(), { ok: false, lines: ["csi: ok", "informers: not synced"] });
  readiness.set("informers", true);
  strictEqual(readiness.report().ok, true);
});

Deno.test("Readiness evaluates a condition at each report: it reflects now, and recovers", () => {
  let driver: true | string = true;
  const readiness = new Readiness();
  readiness.set("csi", () => driver);
  strictEqual(readiness.report().ok, true);
  driver = "CSI driver did not answer Probe within 5 s";
  deepStrictEqual(readiness.report(), {
    ok: false,
    lines: ["csi: CSI driver did not answer Probe within 5 s"],
  });
  driver = true;
  strictEqual(readiness.report().ok, true, "not latched: back by itself");
});

Deno.test("Readiness logs each transition once, of each condition and of the whole", () => {
  const { logger, lines } = capturing(2);
  const changes: string[] = [];
  let informers: true | string = "persistentvolumes not listed yet";
  const readiness = new Readiness({
    logger,
    onChange: (condition, met) => changes.push(`${condition}=${met}`),
  });
  readiness.set("csi", true);
  readiness.set("informers", () => informers);
  readiness.report();
  strictEqual(lines.length, 0, "not met at start-up is no news");
  informers = true;
  readiness.report();
  readiness.report();
  informers = "persistentvolumes cannot list or watch for 31 s (connection refused)";
  readiness.report();
  informers = "persistentvolumes cannot list or watch for 32 s (connection refused)";
  readiness.report();
  informers = true;
  readiness.report();
  deepStrictEqual(parsed(lines).map((record) => [record.msg, record.condition, record.reason]), [
    ["Readiness condition met", "informers", undefined],
    ["Ready: every readiness condition is met", undefined, undefined],
    [
      "Readiness condition failed",
      "informers",
      "persistentvolumes cannot list or watch for 31 s (connection refused)",
    ],
    ["Not ready", undefined, undefined],
    ["Readiness condition met", "informers", undefined],
    ["Ready: every readiness condition is met", undefined, undefined],
  ]);
  deepStrictEqual(changes, [
    "csi=true",
    "informers=false",
    "informers=true",
    "informers=false",
    "informers=true",
  ]);
  deepStrictEqual(
    parsed(lines).map((record) => record.level),
    ["notice", "notice", "warn", "warn", "notice", "notice"],
    "visible at -v=0",
  );
});
