import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { GiB, MiB, parseByteQuantity, toBytes } from "./quantity.ts";

const bytesOf = (text: string): number | string => {
  const parsed = parseByteQuantity(text);
  return parsed.ok ? parsed.bytes : parsed.problem;
};

Deno.test("binary, decimal and plain sizes parse to bytes", () => {
  deepStrictEqual(
    ["10Gi", "500Mi", "1Ki", "1G", "2k", "1048576", "0", "1Pi"].map(bytesOf),
    [10 * GiB, 500 * MiB, 1024, 1e9, 2000, 1048576, 0, 2 ** 50],
  );
});

Deno.test("fractions and exponents round up to whole bytes like resource.Quantity.Value()", () => {
  deepStrictEqual(
    ["1.5Gi", "0.5Ki", "1500m", "1m", "2e3", "1.5E3", ".5k", "+3"].map(bytesOf),
    [1.5 * GiB, 512, 2, 1, 2000, 1500, 500, 3],
  );
});

Deno.test("malformed, negative and too large sizes are rejected with the input named", () => {
  for (const text of ["", "Gi", "10GB", "-1Gi", "1.2.3", "ten", "10 Gi"]) {
    const parsed = parseByteQuantity(text);
    strictEqual(parsed.ok, false, text);
    if (!parsed.ok) strictEqual(parsed.problem.includes(`"${text}"`), true, parsed.problem);
  }
  const huge = parseByteQuantity("9Ei");
  strictEqual(huge.ok, false);
  if (!huge.ok) strictEqual(huge.problem.includes("larger than"), true);
});

Deno.test("toBytes accepts whole byte counts and quantities and throws on anything else", () => {
  strictEqual(toBytes(42), 42);
  strictEqual(toBytes("1Mi"), MiB);
  throws(() => toBytes(-1), RangeError);
  throws(() => toBytes(1.5), RangeError);
  throws(() => toBytes("lots"), /"lots" is not a size/);
});
