import { strictEqual } from "node:assert/strict";
import { SlowSet } from "./slow_set.ts";

Deno.test("SlowSet delays a claim until the retention passes, and forgets it for a new class", () => {
  let now = 0;
  const slow = new SlowSet({ retentionMs: 300_000, now: () => now });
  strictEqual(slow.remainingMs("claim", "class-1"), 0);
  slow.add("claim", "class-1");
  now = 100_000;
  strictEqual(slow.remainingMs("claim", "class-1"), 200_000);
  strictEqual(slow.remainingMs("claim", "class-2"), 0, "a recreated class clears the entry");
  strictEqual(slow.remainingMs("claim", "class-1"), 0);
  slow.add("claim", "class-1");
  now = 400_000;
  strictEqual(slow.remainingMs("claim", "class-1"), 0);
});

Deno.test("SlowSet driven past its limit keeps the newest claims and drops expired ones on add", () => {
  let now = 0;
  let evicted = 0;
  const slow = new SlowSet({
    retentionMs: 1000,
    now: () => now,
    limit: 3,
    observer: { size: () => {}, evicted: () => evicted++ },
  });
  for (let i = 0; i < 5; i++) slow.add(`claim-${i}`, "class");
  strictEqual(slow.size, 3);
  strictEqual(evicted, 2);
  strictEqual(slow.remainingMs("claim-0", "class"), 0, "the oldest went: retried early, no harm");
  strictEqual(slow.remainingMs("claim-4", "class"), 1000);
  now = 5000;
  slow.add("claim-5", "class");
  strictEqual(slow.size, 1, "claims deleted long ago do not stay forever");
});
