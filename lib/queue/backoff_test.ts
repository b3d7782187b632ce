import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { exponentialDelay, jitteredDelay, reserveToken } from "./backoff.ts";

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

Deno.test("jitteredDelay() subtracts base·random and never goes below zero", () => {
  const cases: [delayMs: number, baseMs: number, random: number, expected: number][] = [
    [1000, 1000, 0, 1000],
    [1000, 1000, 0.25, 750],
    [2000, 1000, 0.5, 1500],
    [300_000, 1000, 0.75, 299_250],
    [100, 1000, 0.5, 0],
    [0, 1000, 0, 0],
  ];
  for (const [delayMs, baseMs, random, expected] of cases) {
    strictEqual(jitteredDelay(delayMs, { baseMs, random }), expected, `${delayMs} ${random}`);
  }
});

Deno.test("reserveToken() spends the burst, then waits 1/qps per token, refilling with time", () => {
  const limits = { qps: 10, burst: 2 };
  const steps: [nowMs: number, expectedDelayMs: number][] = [
    [0, 0], // full bucket: 2 tokens
    [0, 0],
    [0, 100], // 1 token of debt at 10 qps
    [0, 200],
    [250, 50], // 0.25 s refilled 2.5 tokens: -2 + 2.5 - 1 = -0.5
    [10_000, 0], // refill stops at burst
    [10_000, 0],
    [10_000, 100],
  ];
  let bucket = { tokens: limits.burst, lastMs: 0 };
  for (const [index, [nowMs, expectedDelayMs]] of steps.entries()) {
    const reserved = reserveToken(bucket, { ...limits, nowMs });
    strictEqual(Math.round(reserved.delayMs * 1e6) / 1e6, expectedDelayMs, `step ${index}`);
    bucket = reserved.bucket;
  }
});

Deno.test("reserveToken() refills nothing when the clock goes backwards", () => {
  const reserved = reserveToken({ tokens: 0, lastMs: 1000 }, { qps: 10, burst: 5, nowMs: 500 });
  deepStrictEqual(reserved, { bucket: { tokens: -1, lastMs: 1000 }, delayMs: 100 });
});
