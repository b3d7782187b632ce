import { deepStrictEqual } from "node:assert/strict";
import { collectionLogFields } from "./collection_log.ts";

Deno.test("collectionLogFields() rounds the time and the heap's MiB to a tenth", () => {
  deepStrictEqual(
    collectionLogFields({
      ms: 12.345,
      kind: "growth",
      heapBeforeBytes: 3 * 1048576 + 200_000,
      heapAfterBytes: 1048576,
    }),
    { ms: 12.3, kind: "growth", heapBeforeMiB: 3.2, heapAfterMiB: 1 },
  );
});

Deno.test("collectionLogFields() leaves a heap it did not read undefined", () => {
  deepStrictEqual(collectionLogFields({ ms: 40, kind: "shrink" }), {
    ms: 40,
    kind: "shrink",
    heapBeforeMiB: undefined,
    heapAfterMiB: undefined,
  });
});
