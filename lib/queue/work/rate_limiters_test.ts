import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  JitteredExponentialRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
  TokenBucketRateLimiter,
} from "./rate_limiters.ts";

function whenTimes(limiter: RateLimiter, key: string, times: number): number[] {
  return Array.from({ length: times }, () => limiter.when(key));
}

Deno.test("ItemExponentialFailureRateLimiter doubles per key, caps, and forget() resets", () => {
  const limiter = new ItemExponentialFailureRateLimiter(1, 1000);
  deepStrictEqual(whenTimes(limiter, "a", 12), [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]);
  strictEqual(limiter.numRequeues("a"), 12);
  deepStrictEqual(whenTimes(limiter, "b", 2), [1, 2], "keys count separately");
  limiter.forget("a");
  strictEqual(limiter.numRequeues("a"), 0);
  strictEqual(limiter.when("a"), 1);
  strictEqual(limiter.numRequeues("b"), 2);
});

Deno.test("TokenBucketRateLimiter lets a burst through, then spaces keys at 1/qps, for all keys", () => {
  let nowMs = 0;
  const limiter = new TokenBucketRateLimiter(10, 3, { now: () => nowMs });
  const waits = ["a", "b", "c", "d", "e"].map((key) => Math.round(limiter.when(key)));
  deepStrictEqual(waits, [0, 0, 0, 100, 200]);
  nowMs = 1000;
  strictEqual(Math.round(limiter.when("a")), 0, "one second refilled ten tokens, minus the debt");
  strictEqual(limiter.numRequeues("a"), 0, "the bucket tracks no key");
});

Deno.test("MaxOfRateLimiter asks every limiter and returns the longest wait", () => {
  const slow = new ItemExponentialFailureRateLimiter(100, 1000);
  const fast = new ItemExponentialFailureRateLimiter(1, 1000);
  const limiter = new MaxOfRateLimiter([fast, slow]);
  deepStrictEqual(whenTimes(limiter, "k", 3), [100, 200, 400]);
  strictEqual(fast.numRequeues("k"), 3, "the shorter limiter counted every attempt too");
  strictEqual(limiter.numRequeues("k"), 3);
  limiter.forget("k");
  deepStrictEqual([fast.numRequeues("k"), slow.numRequeues("k")], [0, 0]);
});

Deno.test("defaultControllerRateLimiter() is 5 ms doubling per key within a 100-token burst", () => {
  let nowMs = 0;
  const limiter = defaultControllerRateLimiter({ now: () => nowMs });
  deepStrictEqual(whenTimes(limiter, "k", 4), [5, 10, 20, 40]);
  // Exhaust the rest of the burst with other keys: the 101st attempt waits for the bucket.
  for (let i = 4; i < 100; i++) strictEqual(limiter.when(`key-${i}`), 5);
  strictEqual(Math.round(limiter.when("fresh")), 100);
  nowMs = 60_000;
  strictEqual(limiter.when("fresh"), 10, "refilled: the per-key backoff rules again");
});

Deno.test("defaultControllerRateLimiter() caps the per-key wait at 1000 s", () => {
  let nowMs = 0;
  const limiter = defaultControllerRateLimiter({ now: () => nowMs });
  const waits = Array.from({ length: 20 }, () => {
    nowMs += 10_000_000; // keep the bucket full so only the per-key backoff counts
    return limiter.when("k");
  });
  strictEqual(waits[17], 655_360);
  strictEqual(waits[18], 1_000_000);
  strictEqual(waits[19], 1_000_000);
});

Deno.test("JitteredExponentialRateLimiter: base·2^failures capped, minus U[0,1)·base, never below 0", () => {
  const draws = [0, 0.999, 0.5, 0.25, 0.5, 0.5];
  const limiter = new JitteredExponentialRateLimiter(
    { baseMs: 20_000, maxMs: 60_000 },
    { random: () => draws.shift()! },
  );
  // 20 s − 0, 40 s − 19.98 s, 60 s (capped) − 10 s, then capped − 5 s.
  deepStrictEqual(whenTimes(limiter, "uid", 4), [20_000, 40_000 - 19_980, 50_000, 55_000]);
  limiter.forget("uid");
  strictEqual(limiter.numRequeues("uid"), 0);
  strictEqual(limiter.when("uid"), 10_000, "after forget() the first attempt again: (0, base]");
  const zero = new JitteredExponentialRateLimiter({ baseMs: 100, maxMs: 50 }, {
    random: () => 0.9,
  });
  strictEqual(zero.when("k"), 0, "a jitter larger than the capped delay gives 0");
});

Deno.test("JitteredExponentialRateLimiter stays within upstream's bounds for every attempt", () => {
  const limiter = new JitteredExponentialRateLimiter({ baseMs: 20, maxMs: 60 });
  for (let round = 0; round < 200; round++) {
    const [first, second, third, capped] = whenTimes(limiter, "k", 4) as [
      number,
      number,
      number,
      number,
    ];
    strictEqual(first > 0 && first <= 20, true, `first ${first}`);
    strictEqual(second > 20 && second <= 40, true, `second ${second}`);
    strictEqual(third > 40 && third <= 60, true, `third ${third}`);
    strictEqual(capped > 40 && capped <= 60, true, `capped ${capped}`);
    limiter.forget("k");
  }
});
