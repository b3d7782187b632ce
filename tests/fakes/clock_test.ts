import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { FakeClock } from "./clock.ts";

Deno.test("FakeClock fires due timers in deadline order, each at its own time", () => {
  const clock = new FakeClock(1000);
  const fired: [string, number][] = [];
  clock.schedule(() => fired.push(["late", clock.now()]), 30);
  clock.schedule(() => fired.push(["early", clock.now()]), 10);
  clock.schedule(() => fired.push(["tie", clock.now()]), 10);
  clock.advance(20);
  deepStrictEqual(fired, [["early", 1010], ["tie", 1010]]);
  strictEqual(clock.now(), 1020);
  clock.advance(10);
  deepStrictEqual(fired.at(-1), ["late", 1030]);
  strictEqual(clock.pendingTimers(), 0);
});

Deno.test("FakeClock runs timers armed by a firing timer when they fall due within advance()", () => {
  const clock = new FakeClock();
  const fired: number[] = [];
  clock.schedule(() => {
    fired.push(clock.now());
    clock.schedule(() => fired.push(clock.now()), 5);
  }, 5);
  clock.advance(12);
  deepStrictEqual(fired, [5, 10]);
});

Deno.test("FakeClock never fires a cancelled timer", () => {
  const clock = new FakeClock();
  let fired = false;
  const cancel = clock.schedule(() => (fired = true), 5);
  strictEqual(clock.pendingTimers(), 1);
  cancel();
  strictEqual(clock.pendingTimers(), 0);
  clock.advance(100);
  strictEqual(fired, false);
});
