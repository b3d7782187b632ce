import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { capturing } from "../../../tests/fakes/logger.ts";
import { FakeClock } from "../../../tests/fakes/clock.ts";
import { ItemExponentialFailureRateLimiter } from "./rate_limiters.ts";
import { eventually, flush, gate, peek, PENDING } from "../../../tests/fakes/async.ts";
import { WorkQueue } from "./queue.ts";
import { type HandleOutcome, runWorkers } from "./workers.ts";

function fakeQueue(): { queue: WorkQueue; clock: FakeClock } {
  const clock = new FakeClock();
  const rateLimiter = new ItemExponentialFailureRateLimiter(100, 10_000);
  return { queue: new WorkQueue({ clock, rateLimiter }), clock };
}

/** Outcomes a handler returns for one key, in call order; "throw" throws. */
function scripted(script: (HandleOutcome | "throw")[]): {
  handle: (key: string) => Promise<HandleOutcome>;
  calls: () => number;
} {
  let calls = 0;
  const handle = () => {
    const step = script[calls++] ?? { kind: "done" };
    return step === "throw" ? Promise.reject(new Error("boom")) : Promise.resolve(step);
  };
  return { handle, calls: () => calls };
}

Deno.test("runWorkers() runs up to N handlers in parallel and never more", async () => {
  const { queue } = fakeQueue();
  const controller = new AbortController();
  const gates = new Map<string, () => void>();
  let running = 0;
  let mostRunning = 0;
  const handled: string[] = [];
  const handle = async (key: string): Promise<HandleOutcome> => {
    running++;
    mostRunning = Math.max(mostRunning, running);
    const { promise, open } = gate();
    gates.set(key, open);
    await promise;
    running--;
    handled.push(key);
    return { kind: "done" };
  };
  for (let i = 0; i < 8; i++) queue.add(`k${i}`);
  const pool = runWorkers(queue, { workers: 3, handle, signal: controller.signal });
  await eventually(() => running === 3, "three handlers running");
  strictEqual(queue.len(), 5);
  while (handled.length < 8) {
    for (const open of gates.values()) open();
    await eventually(() => running === Math.min(3, 8 - handled.length), "next handlers started");
  }
  controller.abort();
  await pool;
  strictEqual(mostRunning, 3);
  deepStrictEqual(handled.toSorted(), ["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"]);
});

Deno.test("a key re-added while its handler runs is handled again afterwards, not alongside", async () => {
  const { queue } = fakeQueue();
  const controller = new AbortController();
  let running = 0;
  let overlapped = false;
  let calls = 0;
  const handle = async (key: string): Promise<HandleOutcome> => {
    overlapped ||= running > 0;
    running++;
    if (++calls === 1) queue.add(key);
    await new Promise((resolve) => setTimeout(resolve, 5));
    running--;
    return { kind: "done" };
  };
  queue.add("a");
  const pool = runWorkers(queue, { workers: 4, handle, signal: controller.signal });
  await eventually(() => calls === 2 && running === 0, "second run finished");
  controller.abort();
  await pool;
  strictEqual(overlapped, false);
});

Deno.test("a throwing handler is logged and retried with backoff, and success forgets it", async () => {
  const { queue, clock } = fakeQueue();
  const controller = new AbortController();
  const { logger, lines } = capturing(5);
  const { handle, calls } = scripted(["throw", "throw", { kind: "done" }]);
  queue.add("pvc-1");
  const pool = runWorkers(queue, { workers: 1, handle, signal: controller.signal, logger });
  await eventually(() => calls() === 1 && queue.numRequeues("pvc-1") === 1, "first failure");
  clock.advance(99);
  await flush();
  strictEqual(calls(), 1, "not yet due");
  clock.advance(1);
  await eventually(() => calls() === 2 && queue.numRequeues("pvc-1") === 2, "second failure");
  clock.advance(200);
  await eventually(() => calls() === 3 && queue.numRequeues("pvc-1") === 0, "success forgot");
  controller.abort();
  await pool;
  const threw = lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === "error");
  strictEqual(threw.length, 2);
  deepStrictEqual([threw[0].key, threw[0].err.message], ["pvc-1", "boom"]);
});

Deno.test("retryAfter re-adds the key after its delay and keeps the failure count", async () => {
  const { queue, clock } = fakeQueue();
  const controller = new AbortController();
  const { handle, calls } = scripted([
    { kind: "retry", error: new Error("busy") },
    { kind: "retryAfter", ms: 5000 },
    { kind: "done" },
  ]);
  queue.add("a");
  const pool = runWorkers(queue, { workers: 1, handle, signal: controller.signal });
  await eventually(() => calls() === 1, "first attempt");
  clock.advance(100);
  await eventually(() => calls() === 2, "retried after the backoff");
  clock.advance(4999);
  await flush();
  strictEqual(calls(), 2, "not yet due");
  strictEqual(queue.numRequeues("a"), 1, "retryAfter neither forgot nor counted");
  clock.advance(1);
  await eventually(() => calls() === 3 && queue.numRequeues("a") === 0, "done after the delay");
  controller.abort();
  await pool;
});

Deno.test("requeue runs the key again at once, keeping its failure count", async () => {
  const { queue } = fakeQueue();
  const controller = new AbortController();
  const { handle: scriptedHandle, calls } = scripted([{ kind: "requeue" }, { kind: "requeue" }]);
  const requeuesSeen: number[] = [];
  const handle = (key: string) => {
    requeuesSeen.push(queue.numRequeues(key));
    return scriptedHandle(key);
  };
  // One failure on record; its delayed add never comes due on the fake clock.
  queue.addRateLimited("a");
  queue.add("a");
  const pool = runWorkers(queue, { workers: 1, handle, signal: controller.signal });
  await eventually(() => calls() === 3, "two requeues, then done");
  controller.abort();
  await pool;
  deepStrictEqual(requeuesSeen, [1, 1, 1]);
  strictEqual(queue.numRequeues("a"), 0, "done forgot");
  queue.shutDown();
});

Deno.test("abort stops taking keys and runWorkers() waits for running handlers", async () => {
  const { queue } = fakeQueue();
  const controller = new AbortController();
  const release = gate();
  const seen: { key: string; aborted: boolean }[] = [];
  const handle = async (key: string, signal: AbortSignal): Promise<HandleOutcome> => {
    await release.promise;
    seen.push({ key, aborted: signal.aborted });
    return { kind: "done" };
  };
  for (const key of ["a", "b", "c"]) queue.add(key);
  const pool = runWorkers(queue, { workers: 2, handle, signal: controller.signal });
  await eventually(() => queue.len() === 1, "two keys taken");
  controller.abort();
  strictEqual(await peek(pool), PENDING, "handlers still running");
  release.open();
  await pool;
  deepStrictEqual(seen, [{ key: "a", aborted: true }, { key: "b", aborted: true }]);
  strictEqual(queue.len(), 1, "no key taken after the abort");
});

Deno.test("runWorkers() ends once the queue is shut down and its keys are handled", async () => {
  const { queue } = fakeQueue();
  const { handle, calls } = scripted([]);
  queue.add("a");
  queue.add("b");
  const pool = runWorkers(queue, { workers: 2, handle, signal: new AbortController().signal });
  queue.shutDown();
  await pool;
  strictEqual(calls(), 2);
});
