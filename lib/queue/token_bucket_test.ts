import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { FakeClock } from "../../tests/fakes/clock.ts";
import { reserveToken, TokenBucket } from "./token_bucket.ts";

/** The fake clock, with a turn of the microtask queue after each move so that grants resolve. */
function manualClock() {
  const clock = new FakeClock();
  const advance = async (ms: number) => {
    clock.advance(ms);
    for (let turn = 0; turn < 3; turn++) await Promise.resolve();
  };
  return { clock, advance };
}

Deno.test("TokenBucket grants the burst at once, then qps tokens per second", async () => {
  const { clock, advance } = manualClock();
  const bucket = new TokenBucket({ qps: 5, burst: 10, clock });
  const granted: number[] = [];
  for (let i = 0; i < 15; i++) void bucket.take().then(() => granted.push(i));
  await advance(0);
  strictEqual(granted.length, 10);
  await advance(200);
  strictEqual(granted.length, 11);
  await advance(800);
  strictEqual(granted.length, 15);
  bucket.close();
});

Deno.test("TokenBucket serves high-priority waiters before low-priority ones", async () => {
  const { clock, advance } = manualClock();
  const bucket = new TokenBucket({ qps: 1, burst: 1, clock });
  await bucket.take();
  const order: string[] = [];
  void bucket.take("low").then(() => order.push("event-1"));
  void bucket.take("low").then(() => order.push("event-2"));
  void bucket.take("high").then(() => order.push("pv"));
  await advance(1000);
  await advance(1000);
  await advance(1000);
  deepStrictEqual(order, ["pv", "event-1", "event-2"]);
  bucket.close();
});

Deno.test("TokenBucket.take() resolves false when aborted or closed", async () => {
  const { clock } = manualClock();
  const bucket = new TokenBucket({ qps: 1, burst: 1, clock });
  await bucket.take();
  const controller = new AbortController();
  const aborted = bucket.take("high", controller.signal);
  const closed = bucket.take("low");
  controller.abort();
  strictEqual(await aborted, false);
  bucket.close();
  strictEqual(await closed, false);
  strictEqual(bucket.waiting, 0);
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
