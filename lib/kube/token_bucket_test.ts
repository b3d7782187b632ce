import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type BucketClock, TokenBucket } from "./token_bucket.ts";

/** A manual clock: timers fire only when the test advances time. */
function manualClock() {
  let now = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  let nextId = 1;
  const clock: BucketClock = {
    now: () => now,
    setTimeout: (callback, ms) => {
      const id = nextId++;
      timers.set(id, { at: now + ms, callback });
      return id;
    },
    clearTimeout: (handle) => timers.delete(handle as number),
  };
  const advance = async (ms: number) => {
    const end = now + ms;
    for (;;) {
      const due = [...timers].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (due === undefined) break;
      timers.delete(due[0]);
      now = due[1].at;
      due[1].callback();
      await Promise.resolve();
    }
    now = end;
    await Promise.resolve();
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
