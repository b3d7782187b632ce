import { deepStrictEqual } from "node:assert/strict";
import { ageText, listText, sizeText } from "./words.ts";

Deno.test("sizes in the largest binary unit, with one decimal when not whole", () => {
  deepStrictEqual(
    [sizeText(5n * 1024n ** 3n), sizeText(1536n * 1024n ** 2n), sizeText(1000n), sizeText(0n)],
    ["5Gi", "1.5Gi", "1000", "0"],
  );
});

Deno.test("ages and lists read as words", () => {
  const now = "2026-11-23T12:00:00Z";
  deepStrictEqual(
    [ageText("2026-11-23T11:59:30Z", now), ageText("2026-11-23T11:00:00Z", now), ageText("x", now)],
    ["30s ago", "60m ago", "at an unknown time"],
  );
  deepStrictEqual([listText([]), listText(["a"]), listText(["a", "b", "c"])], [
    "",
    "a",
    "a, b and c",
  ]);
});
