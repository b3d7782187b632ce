import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { countedSignal } from "../../tests/fakes/async.ts";
import { AbortFanout } from "./abort_fanout.ts";

Deno.test("subscriptions to one signal share one listener and each runs once at the abort", () => {
  const fanout = new AbortFanout();
  const { controller, listeners } = countedSignal();
  const ran: number[] = [];
  for (let i = 0; i < 100; i++) fanout.subscribe(controller.signal, () => ran.push(i));
  controller.abort();
  strictEqual(listeners(), 1);
  deepStrictEqual(ran, Array.from({ length: 100 }, (_, i) => i));
});

Deno.test("an unsubscribed callback does not run at the abort; unsubscribing twice is harmless", () => {
  const fanout = new AbortFanout();
  const controller = new AbortController();
  const ran: string[] = [];
  const first = fanout.subscribe(controller.signal, () => ran.push("first"));
  fanout.subscribe(controller.signal, () => ran.push("second"));
  first();
  first();
  controller.abort();
  deepStrictEqual(ran, ["second"]);
});

Deno.test("the same callback subscribed twice runs twice, and a signal already aborted runs it at once", () => {
  const fanout = new AbortFanout();
  const controller = new AbortController();
  let runs = 0;
  const callback = () => runs++;
  fanout.subscribe(controller.signal, callback);
  fanout.subscribe(controller.signal, callback);
  controller.abort();
  strictEqual(runs, 2);
  fanout.subscribe(controller.signal, callback);
  strictEqual(runs, 3, "subscribing to an aborted signal runs the callback");
});

Deno.test("a callback that subscribes again during the abort runs at once", () => {
  const fanout = new AbortFanout();
  const controller = new AbortController();
  const ran: string[] = [];
  fanout.subscribe(controller.signal, () => {
    ran.push("outer");
    fanout.subscribe(controller.signal, () => ran.push("inner"));
  });
  controller.abort();
  deepStrictEqual(ran, ["outer", "inner"]);
});
