import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { problem } from "../outcome.ts";
import { SourceMisses } from "./misses.ts";

const MISS = problem("the source is on node-b", { state: "reschedule" });

Deno.test("SourceMisses recalls a miss for its retention time, then forgets it", () => {
  let now = 0;
  const misses = new SourceMisses({ retentionMs: 1000, now: () => now });
  misses.remember("uid-1", MISS);
  deepStrictEqual(misses.recall("uid-1"), MISS);
  now = 1000;
  strictEqual(misses.recall("uid-1"), undefined);
  strictEqual(misses.size, 0);
});

Deno.test("SourceMisses past its limit drops the oldest claim and reports the eviction", () => {
  const seen = { sizes: [] as number[], evicted: 0 };
  const misses = new SourceMisses({
    retentionMs: 60_000,
    now: () => 0,
    limit: 2,
    observer: { size: (n) => seen.sizes.push(n), evicted: () => seen.evicted++ },
  });
  for (const uid of ["a", "b", "c"]) misses.remember(uid, MISS);
  strictEqual(misses.size, 2);
  strictEqual(misses.recall("a"), undefined, "the oldest went");
  deepStrictEqual(misses.recall("c"), MISS);
  strictEqual(seen.evicted, 1);
  strictEqual(seen.sizes.at(-1), 2);
});
