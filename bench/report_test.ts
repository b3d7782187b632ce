import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { comparisonTable, formatRatio, oursCommit, SampleBook } from "./report.ts";
import { sampleResult } from "./test_support.ts";

Deno.test("formatRatio() divides the medians and has no ratio without both sides", () => {
  strictEqual(formatRatio([1, 2, 3], [4, 4, 5]), "0.50×");
  strictEqual(formatRatio([30, 40, 50], [2, 4, 6]), "10.0×");
  strictEqual(formatRatio([1], []), "–");
  strictEqual(formatRatio([1], [0]), "–");
});

Deno.test("comparisonTable() has one row per metric with median (min–max) per agent", () => {
  const lines = comparisonTable([sampleResult()]).split("\n");
  strictEqual(lines.length, 4);
  strictEqual(lines[2], "| burst (3 runs) | time (s) | 2.0 (1.0–3.0) | 5.0 (4.0–6.0) | 0.40× |");
  strictEqual(lines[3], "| burst (3 runs) | baseline | 7 (7–7) | – | – |");
});

Deno.test("SampleBook keeps the metrics in definition order and refuses unknown ones", () => {
  const book = new SampleBook();
  book.define("b", 1);
  book.define("a", 2);
  book.add("ours", "a", 1);
  book.add("upstream", "b", 2);
  deepStrictEqual(book.metrics, [
    { metric: "b", decimals: 1, ours: [], upstream: [2] },
    { metric: "a", decimals: 2, ours: [1], upstream: [] },
  ]);
  throws(() => book.add("ours", "c", 1), /not defined/);
});

Deno.test("each row names the commit ours was built from, from its --version or the notes", () => {
  const versioned = sampleResult({
    binaries: ["ours: csi-node-provisioner 0.1.0 (commit 72cf53b8b3350fc6), /tmp/x", "upstream: y"],
  });
  strictEqual(oursCommit(versioned), "72cf53b");
  strictEqual(
    comparisonTable([versioned]).split("\n")[2]?.startsWith("| burst (3 runs, ours at 72cf53b) |"),
    true,
  );
  strictEqual(
    oursCommit(sampleResult({ notes: ["ours: dist/ compiled from git HEAD 8135b17 (x)"] })),
    "8135b17",
  );
  strictEqual(oursCommit(sampleResult()), undefined);
});
