import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { KeyFifo } from "./key_fifo.ts";

Deno.test("KeyFifo keeps first-in-first-out order across its compaction", () => {
  const fifo = new KeyFifo();
  const taken: string[] = [];
  for (let i = 0; i < 5000; i++) {
    fifo.push(`k${i}`);
    // Take two of every three, so the consumed prefix grows past the compaction threshold.
    if (i % 3 !== 2) taken.push(fifo.shift() ?? "none");
  }
  strictEqual(fifo.length, 5000 - taken.length);
  while (fifo.length > 0) taken.push(fifo.shift() ?? "none");
  deepStrictEqual(taken, Array.from({ length: 5000 }, (_, i) => `k${i}`));
  strictEqual(fifo.shift(), undefined);
});
