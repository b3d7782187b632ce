import { deepStrictEqual, throws } from "node:assert/strict";
import { parseBenchArgs } from "./cli.ts";
import { RESULTS_PATH } from "./results_file.ts";
import { selectScenarios } from "./main.ts";
import { alternatingRuns } from "./scenario.ts";
import { runPool } from "./workload.ts";

Deno.test("parseBenchArgs() reads scenario names, --runs, --results, --note and --minutes", () => {
  const args = parseBenchArgs([
    "--",
    "burst",
    "--runs",
    "4",
    "--results",
    "/tmp/r.md",
    "--note",
    "a",
    "--note",
    "b",
    "--minutes",
    "2.5",
  ]);
  deepStrictEqual(args, {
    scenarios: ["burst"],
    runs: 4,
    resultsPath: "/tmp/r.md",
    notes: ["a", "b"],
    minutes: 2.5,
  });
  throws(() => parseBenchArgs(["--runs", "0"]), /positive integer/);
  throws(() => parseBenchArgs(["--minutes", "0"]), /positive number/);
});

Deno.test("parseBenchArgs() reads --apiserver-profile as the fleet's profile directory", () => {
  deepStrictEqual(parseBenchArgs(["fleet", "--apiserver-profile", "/tmp/profiles"]), {
    scenarios: ["fleet"],
    runs: undefined,
    resultsPath: RESULTS_PATH,
    notes: [],
    apiServerProfileDir: "/tmp/profiles",
  });
});

Deno.test("selectScenarios() keeps table order and refuses unknown names", () => {
  deepStrictEqual(selectScenarios(["memory-at-scale", "startup"]).map((s) => s.id), [
    "startup",
    "memory-at-scale",
  ]);
  deepStrictEqual(selectScenarios([]).map((s) => s.id), [
    "startup",
    "burst",
    "default-budget",
    "memory-at-scale",
    "capacity",
    "immediate",
    "fleet",
    "soak",
  ]);
  throws(() => selectScenarios(["nope"]), /unknown scenario nope/);
  const from = selectScenarios(["fleet", "burst"]);
  const defaults = from.slice(1);
  deepStrictEqual(selectScenarios([], { from, defaults }).map((s) => s.id), ["fleet"]);
  deepStrictEqual(selectScenarios(["burst"], { from, defaults }).map((s) => s.id), ["burst"]);
  throws(() => selectScenarios(["startup"], { from, defaults }), /unknown scenario startup/);
});

Deno.test("alternatingRuns() interleaves the agents", () => {
  deepStrictEqual(alternatingRuns(2).map((r) => `${r.agent}${r.run}`), [
    "ours0",
    "upstream0",
    "ours1",
    "upstream1",
  ]);
});

Deno.test("runPool() keeps at most `concurrency` tasks in flight and returns results in order", async () => {
  let inFlight = 0;
  let most = 0;
  const results = await runPool(10, {
    concurrency: 3,
    task: async (index) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight--;
      return index * 2;
    },
  });
  deepStrictEqual(results, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
  deepStrictEqual(most, 3);
});

Deno.test("parseBenchArgs() reads a scenario's size from --nodes and --claims", () => {
  const args = parseBenchArgs(["fleet", "--nodes", "5", "--claims", "100"]);
  deepStrictEqual([args.nodes, args.claims], [5, 100]);
  deepStrictEqual(Object.keys(parseBenchArgs(["fleet"])).includes("nodes"), false);
  throws(() => parseBenchArgs(["--nodes", "1.5"]), /--nodes must be a positive integer/);
});
