import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { FakeClock } from "../../../tests/fakes/clock.ts";
import { ItemExponentialFailureRateLimiter } from "./rate_limiters.ts";
import { countedSignal, peek, PENDING } from "../../../tests/fakes/async.ts";
import { WorkQueue } from "./queue.ts";

function fakeQueue(): { queue: WorkQueue; clock: FakeClock } {
  const clock = new FakeClock();
  const rateLimiter = new ItemExponentialFailureRateLimiter(10, 1000);
  return { queue: new WorkQueue({ clock, rateLimiter }), clock };
}

/** Takes every queued key, in order, without marking any done. */
async function takeAll(queue: WorkQueue): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) keys.push(await queue.get() ?? "undefined");
  return keys;
}

Deno.test("add() of a key already waiting does not queue it twice", async () => {
  const { queue } = fakeQueue();
  for (const key of ["a", "b", "a", "c", "b"]) queue.add(key);
  strictEqual(queue.len(), 3);
  deepStrictEqual(await takeAll(queue), ["a", "b", "c"]);
});

Deno.test("add() of a key being processed runs it again after done(), never twice at once", async () => {
  const { queue } = fakeQueue();
  queue.add("a");
  strictEqual(await queue.get(), "a");
  queue.add("a");
  queue.add("a");
  strictEqual(queue.len(), 0, "a key being processed waits aside");
  const second = queue.get();
  strictEqual(await peek(second), PENDING);
  queue.done("a");
  strictEqual(await second, "a");
  queue.done("a");
  strictEqual(queue.len(), 0, "the two adds during processing made one more run");
});

Deno.test("done() of a key not being processed changes nothing", async () => {
  const { queue } = fakeQueue();
  queue.add("a");
  queue.done("a");
  queue.done("never-added");
  deepStrictEqual(await takeAll(queue), ["a"]);
});

Deno.test("get() waits for the next key, and waiting getters are served in call order", async () => {
  const { queue } = fakeQueue();
  const first = queue.get();
  const second = queue.get();
  strictEqual(await peek(first), PENDING);
  queue.add("x");
  queue.add("y");
  deepStrictEqual([await first, await second], ["x", "y"]);
});

Deno.test("get() resolves undefined when its signal aborts; the next key goes to another getter", async () => {
  const { queue } = fakeQueue();
  const controller = new AbortController();
  const aborted = queue.get(controller.signal);
  const other = queue.get();
  controller.abort();
  strictEqual(await aborted, undefined);
  queue.add("a");
  strictEqual(await other, "a");
  strictEqual(await queue.get(controller.signal), undefined, "an aborted signal gets nothing");
});

Deno.test("getters waiting on one signal share one abort listener, and only the waiting ones are ended", async () => {
  const { queue } = fakeQueue();
  const { controller, listeners } = countedSignal();
  const signal = controller.signal;
  const served: (string | undefined)[] = [];
  for (let i = 0; i < 50; i++) {
    const next = queue.get(signal);
    queue.add(`k${i}`);
    served.push(await next);
    queue.done(`k${i}`);
  }
  const waiting = [queue.get(signal), queue.get(signal)];
  const unsignalled = queue.get();
  controller.abort();
  deepStrictEqual(await Promise.all(waiting), [undefined, undefined]);
  queue.add("after");
  strictEqual(await unsignalled, "after", "a getter without the signal still waits");
  strictEqual(listeners(), 1);
  deepStrictEqual(served, Array.from({ length: 50 }, (_, i) => `k${i}`));
});

Deno.test("addAfter() adds the key once its delay has passed", () => {
  const { queue, clock } = fakeQueue();
  queue.addAfter("a", 100);
  queue.addAfter("now", 0);
  strictEqual(queue.len(), 1, "no delay adds at once");
  clock.advance(99);
  strictEqual(queue.len(), 1);
  clock.advance(1);
  strictEqual(queue.len(), 2);
  strictEqual(clock.pendingTimers(), 0);
});

Deno.test("addAfter() of a key already waiting to be added keeps the earlier time", async () => {
  for (const delays of [[50, 100], [100, 50]]) {
    const { queue, clock } = fakeQueue();
    for (const ms of delays) queue.addAfter("a", ms);
    clock.advance(49);
    strictEqual(queue.len(), 0, `${delays}`);
    clock.advance(1);
    deepStrictEqual(await takeAll(queue), ["a"], `${delays}`);
    queue.done("a");
    clock.advance(1000);
    strictEqual(queue.len(), 0, `${delays}: the later time was not kept as a second add`);
    strictEqual(clock.pendingTimers(), 0);
  }
});

Deno.test("delayed keys are added in the order their times come", async () => {
  const { queue, clock } = fakeQueue();
  const delays = Array.from({ length: 60 }, (_, i) => ({ key: `k${i}`, ms: 1 + (i * 37) % 50 }));
  for (const { key, ms } of delays) queue.addAfter(key, ms);
  const taken: string[] = [];
  for (let step = 0; step < 50; step++) {
    clock.advance(1);
    taken.push(...await takeAll(queue));
  }
  const expected = [...delays].sort((a, b) => a.ms - b.ms).map(({ key }) => key);
  deepStrictEqual(taken, expected);
});

Deno.test("addRateLimited() waits longer after each failure until forget()", async () => {
  const { queue, clock } = fakeQueue();
  const readyAfter = async (): Promise<number> => {
    const start = clock.now();
    queue.addRateLimited("a");
    while (queue.len() === 0) clock.advance(1);
    deepStrictEqual(await takeAll(queue), ["a"]);
    queue.done("a");
    return clock.now() - start;
  };
  deepStrictEqual([await readyAfter(), await readyAfter(), await readyAfter()], [10, 20, 40]);
  strictEqual(queue.numRequeues("a"), 3);
  queue.forget("a");
  strictEqual(queue.numRequeues("a"), 0);
  strictEqual(await readyAfter(), 10);
});

Deno.test("shutDown() hands out the keys still queued, then undefined, and refuses adds", async () => {
  const { queue } = fakeQueue();
  queue.add("a");
  queue.add("b");
  queue.shutDown();
  queue.add("c");
  queue.addRateLimited("d");
  strictEqual(queue.isShuttingDown(), true);
  deepStrictEqual([await queue.get(), await queue.get(), await queue.get()], ["a", "b", undefined]);
  strictEqual(queue.numRequeues("d"), 0, "a refused retry counts no failure");
});

Deno.test("shutDown() returns undefined to getters already waiting", async () => {
  const { queue } = fakeQueue();
  const waiting = [queue.get(), queue.get()];
  queue.shutDown();
  deepStrictEqual(await Promise.all(waiting), [undefined, undefined]);
});

Deno.test("shutDown() drops delayed adds and cancels their timer", () => {
  const { queue, clock } = fakeQueue();
  queue.addAfter("a", 100);
  queue.addRateLimited("b");
  strictEqual(clock.pendingTimers(), 1, "one timer serves every delayed key");
  queue.shutDown();
  strictEqual(clock.pendingTimers(), 0);
  clock.advance(10_000);
  strictEqual(queue.len(), 0);
});

Deno.test("shutDown() of a queue on real time leaves no timer behind", () => {
  // --trace-leaks fails this test if a timer outlives it.
  const queue = new WorkQueue();
  queue.addAfter("a", 60_000);
  queue.addRateLimited("b");
  queue.shutDown();
});

Deno.test("shutDownWithDrain() resolves true once every key being processed is done", async () => {
  const { queue } = fakeQueue();
  queue.add("a");
  queue.add("b");
  queue.add("c");
  deepStrictEqual([await queue.get(), await queue.get()], ["a", "b"]);
  const drained = queue.shutDownWithDrain();
  queue.done("a");
  strictEqual(await peek(drained), PENDING);
  queue.done("b");
  strictEqual(await drained, true);
  strictEqual(await queue.get(), "c", "a queued key is still handed out after shutdown");
  queue.done("c");
  strictEqual(
    await queue.shutDownWithDrain(),
    true,
    "with nothing processing it is drained at once",
  );
});

Deno.test("shutDownWithDrain() resolves false when its signal aborts or shutDown() cuts it short", async () => {
  const { queue } = fakeQueue();
  queue.add("a");
  await queue.get();
  const controller = new AbortController();
  const aborted = queue.shutDownWithDrain(controller.signal);
  const cut = queue.shutDownWithDrain();
  controller.abort();
  strictEqual(await aborted, false);
  strictEqual(await peek(cut), PENDING);
  queue.shutDown();
  strictEqual(await cut, false);
});

Deno.test("a key added while processing before shutdown is still handed out after done()", async () => {
  const { queue } = fakeQueue();
  queue.add("a");
  await queue.get();
  queue.add("a");
  const drained = queue.shutDownWithDrain();
  queue.done("a");
  strictEqual(await drained, true);
  strictEqual(await queue.get(), "a");
  strictEqual(await queue.get(), undefined, "then the queue is empty");
});
