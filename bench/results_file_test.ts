import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { mergeScenario, parseResults, recordScenario, renderResults } from "./results_file.ts";
import { sampleResult } from "./test_support.ts";

Deno.test("renderResults() round-trips through parseResults(), even with --> in a note", () => {
  const results = [sampleResult({ notes: ["a --> b"] }), sampleResult({ id: "startup" })];
  const markdown = renderResults(results);
  ok(markdown.includes("| startup (3 runs) | time (s) |"));
  // The table is in scenario order: startup before burst.
  ok(markdown.indexOf("| startup (3 runs)") < markdown.indexOf("| burst (3 runs)"));
  ok(markdown.includes("- a --> b"));
  deepStrictEqual(parseResults(markdown).map((result) => result.id), ["startup", "burst"]);
  strictEqual(parseResults(markdown)[1]?.notes[0], "a --> b");
  deepStrictEqual(parseResults("# no data"), []);
});

Deno.test("mergeScenario() replaces the scenario with the same id and keeps the others", () => {
  const merged = mergeScenario(
    [sampleResult({ id: "memory-at-scale" }), sampleResult({ id: "burst", runs: 3 })],
    sampleResult({ id: "burst", runs: 5 }),
  );
  deepStrictEqual(merged.map((result) => [result.id, result.runs]), [
    ["burst", 5],
    ["memory-at-scale", 3],
  ]);
});

Deno.test("recordScenario() keeps scenarios recorded earlier in the same file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bench-results-" });
  try {
    const path = join(dir, "results", "latest.md");
    await recordScenario(sampleResult({ id: "startup" }), path);
    const all = await recordScenario(sampleResult({ id: "burst" }), path);
    deepStrictEqual(all.map((result) => result.id), ["startup", "burst"]);
    deepStrictEqual(parseResults(await Deno.readTextFile(path)), all);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
