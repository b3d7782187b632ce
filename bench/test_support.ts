/** A ScenarioResult for the results tests. */
import type { ScenarioResult } from "./report.ts";

export function sampleResult(overrides: Partial<ScenarioResult> = {}): ScenarioResult {
  return {
    id: "burst",
    title: "1000 claims",
    date: "2026-11-21T18:00:00.000Z",
    runs: 3,
    machine: { cpuModel: "CPU", cpus: 2, memoryGiB: 24, kernel: "6.1", loadBefore: [1, 2, 3] },
    loadAfter: [2, 2, 3],
    binaries: ["ours: x", "upstream: y"],
    notes: ["how"],
    metrics: [
      { metric: "time (s)", decimals: 1, ours: [2, 1, 3], upstream: [4, 5, 6] },
      { metric: "baseline", decimals: 0, ours: [7], upstream: [] },
    ],
    ...overrides,
  };
}
