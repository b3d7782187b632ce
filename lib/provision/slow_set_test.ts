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
