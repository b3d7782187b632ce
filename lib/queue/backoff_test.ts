import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { exponentialDelay, jitteredDelay } from "./backoff.ts";

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

Deno.test("jitteredDelay() spreads each delay over its upper half and never exceeds max", () => {
  const bounds = { baseMs: 1000, maxMs: 30_000 };
  deepStrictEqual(
    [0, 0.5, 0.998].map((random) => jitteredDelay(0, bounds, () => random)),
    [1000, 750, 501],
  );
  for (let failures = 0; failures < 64; failures++) {
    const delay = jitteredDelay(failures, bounds);
    const full = exponentialDelay(failures, bounds);
    ok(delay <= full && delay >= full / 2 && delay <= bounds.maxMs, `${failures}: ${delay}`);
  }
  // A thousand clients failing together: their delays at the cap are spread, not one instant.
  const delays = new Set(Array.from({ length: 1000 }, () => Math.round(jitteredDelay(40, bounds))));
  ok(delays.size > 900, `${delays.size} distinct delays`);
});
