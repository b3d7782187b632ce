import { strictEqual } from "node:assert/strict";
import { sleep } from "./sleep.ts";

Deno.test("sleep() resolves true after the time and false at once when aborted", async () => {
  strictEqual(await sleep(1), true);
  const controller = new AbortController();
  const started = performance.now();
  const pending = sleep(60_000, controller.signal);
  controller.abort();
  strictEqual(await pending, false);
  strictEqual(performance.now() - started < 1000, true);
  strictEqual(await sleep(10, controller.signal), false, "an aborted signal never sleeps");
});
