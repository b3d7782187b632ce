import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { formatSummary, summarize } from "./stats.ts";

Deno.test("summarize() gives the median of odd and even samples with the range", () => {
  deepStrictEqual(summarize([3, 1, 2]), { median: 2, min: 1, max: 3, runs: 3 });
  deepStrictEqual(summarize([4, 1, 3, 2]), { median: 2.5, min: 1, max: 4, runs: 4 });
  throws(() => summarize([]), RangeError);
  strictEqual(formatSummary(summarize([10, 12, 11])), "11.0 (10.0–12.0)");
});
