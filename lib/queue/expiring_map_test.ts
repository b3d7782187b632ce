import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { ExpiringMap } from "./expiring_map.ts";

Deno.test("ExpiringMap gives a value with its time left until it expires, then forgets it", () => {
  let now = 0;
  const map = new ExpiringMap<string, string>({ retentionMs: 1000, limit: 10, now: () => now });
  map.set("a", "x");
  now = 400;
  deepStrictEqual(map.get("a"), { value: "x", remainingMs: 600 });
  now = 1000;
  strictEqual(map.get("a"), undefined);
  strictEqual(map.size, 0);
});

Deno.test("ExpiringMap drops expired entries at each set, and the oldest past its limit", () => {
  let now = 0;
  const seen = { evicted: 0 };
  const map = new ExpiringMap<string, number>({
    retentionMs: 100,
    limit: 2,
    now: () => now,
    observer: { size: () => {}, evicted: () => seen.evicted++ },
  });
  map.set("old", 1);
  now = 100;
  map.set("a", 2);
  strictEqual(map.size, 1, "the expired entry went at the set");
  map.set("b", 3);
  map.set("c", 4);
  strictEqual(map.get("a"), undefined, "the oldest went past the limit");
  strictEqual(seen.evicted, 1);
  deepStrictEqual(map.get("c")?.value, 4);
});
