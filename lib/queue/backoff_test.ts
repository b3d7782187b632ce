import { strictEqual } from "node:assert/strict";
import { exponentialDelay } from "./backoff.ts";

Deno.test("exponentialDelay() doubles from base per failure and caps at max", () => {
  const cases: [failures: number, baseMs: number, maxMs: number, expected: number][] = [
    [0, 5, 1_000_000, 5],
    [1, 5, 1_000_000, 10],
    [2, 5, 1_000_000, 20],
    [10, 5, 1_000_000, 5120],
    [17, 5, 1_000_000, 655_360],
    [18, 5, 1_000_000, 1_000_000],
    [0, 1000, 300_000, 1000],
    [8, 1000, 300_000, 256_000],
    [9, 1000, 300_000, 300_000],
    [0, 500, 100, 100],
    // 2^2000 overflows to Infinity, which is capped like Go's math.MaxInt64 check.
    [2000, 5, 1_000_000, 1_000_000],
  ];
  for (const [failures, baseMs, maxMs, expected] of cases) {
    strictEqual(exponentialDelay(failures, { baseMs, maxMs }), expected, `${failures} failures`);
  }
});
