import { deepStrictEqual } from "node:assert/strict";
import { realClock } from "./clock.ts";

Deno.test("realClock hands setTimeout whole milliseconds, rounded up, so that a timer never fires before its delay", () => {
  const asked: (number | undefined)[] = [];
  const original = globalThis.setTimeout;
  // setTimeout truncates a fractional delay in Bun and Node: what it is given is what counts.
  globalThis.setTimeout = ((_callback: () => void, ms?: number) => {
    asked.push(ms);
    return 0;
  }) as unknown as typeof setTimeout;
  try {
    realClock.schedule(() => {}, 149.7);
    realClock.schedule(() => {}, 200);
    realClock.schedule(() => {}, 0.2);
    realClock.schedule(() => {}, 0);
  } finally {
    globalThis.setTimeout = original;
  }
  deepStrictEqual(asked, [150, 200, 1, 0]);
});
