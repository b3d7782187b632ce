import { deepStrictEqual, rejects } from "node:assert/strict";
import { InFlightLimit } from "./in_flight.ts";

Deno.test("InFlightLimit holds requests beyond the limit until one finishes, in arrival order", async () => {
  const limit = new InFlightLimit(2);
  const order: string[] = [];
  const gates = new Map<string, PromiseWithResolvers<void>>();
  const request = (name: string) =>
    limit.run(async () => {
      order.push(`start ${name}`);
      const gate = Promise.withResolvers<void>();
      gates.set(name, gate);
      await gate.promise;
      order.push(`end ${name}`);
    });
  const all = ["a", "b", "c", "d"].map(request);
  await Promise.resolve();
  deepStrictEqual(order, ["start a", "start b"]);
  deepStrictEqual(limit.held, 2);
  gates.get("a")!.resolve();
  await new Promise((resolve) => setTimeout(resolve, 0));
  deepStrictEqual(order, ["start a", "start b", "end a", "start c"]);
  for (const name of ["b", "c"]) gates.get(name)!.resolve();
  await new Promise((resolve) => setTimeout(resolve, 0));
  gates.get("d")!.resolve();
  await Promise.all(all);
  deepStrictEqual(limit.held, 0);
});

Deno.test("InFlightLimit drops a waiter whose signal aborts, and serves the next", async () => {
  const limit = new InFlightLimit(1);
  const release = await limit.acquire();
  const controller = new AbortController();
  const abandoned = limit.acquire(controller.signal);
  const next = limit.acquire();
  controller.abort(new Error("shutting down"));
  await rejects(abandoned, /shutting down/);
  release();
  (await next)();
  deepStrictEqual(limit.held, 0);
});
