import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { formatSummary, percentile, summarize } from "./stats.ts";

Deno.test("summarize() gives the median of odd and even samples with the range", () => {
  deepStrictEqual(summarize([3, 1, 2]), { median: 2, min: 1, max: 3, runs: 3 });
  deepStrictEqual(summarize([4, 1, 3, 2]), { median: 2.5, min: 1, max: 4, runs: 4 });
  throws(() => summarize([]), RangeError);
  strictEqual(formatSummary(summarize([10, 12, 11])), "11.0 (10.0–12.0)");
});

Deno.test("percentile() takes the nearest rank: p99 of 100 values is the 99th smallest", () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
  strictEqual(percentile(hundred, 50), 50);
  strictEqual(percentile(hundred, 99), 99);
  strictEqual(percentile(hundred, 100), 100);
  strictEqual(percentile([7], 0), 7);
  throws(() => percentile([], 50), RangeError);
});
