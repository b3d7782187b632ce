import { strictEqual, throws } from "node:assert/strict";
import { assertSameJson, canonicalJson, describeDifference, lineDiff } from "./object_diff.ts";

Deno.test("canonicalJson() sorts keys at every level and drops undefined fields", () => {
  strictEqual(
    canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: undefined } }),
    canonicalJson({ a: { d: [{ x: 2, y: 1 }] }, b: 1 }),
  );
});

Deno.test("lineDiff() is empty for equal text, else - and + lines with context", () => {
  strictEqual(lineDiff("a\nb", "a\nb"), "");
  const expected = ["1", "2", "3", "4", "5", "6", "7"].join("\n");
  const actual = ["1", "2", "3", "x", "5", "6", "7"].join("\n");
  strictEqual(lineDiff(expected, actual, 1), ["  3", "- 4", "+ x", "  5", "  ..."].join("\n"));
});

Deno.test("describeDifference() and assertSameJson() name the sides", () => {
  const names = { what: "the PVs", expectedName: "upstream", actualName: "ours" };
  strictEqual(describeDifference({ a: 1 }, { a: 1 }, names), "");
  const text = describeDifference({ a: 2 }, { a: 1 }, names);
  strictEqual(text, 'the PVs differ (- upstream, + ours):\n  {\n-   "a": 1\n+   "a": 2\n  }');
  throws(() => assertSameJson({ a: 2 }, { a: 1 }, names), { message: text });
});
