import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  formatBinarySI,
  MAX_INT64,
  parseQuantity,
  QUANTITY_FORMAT_ERROR,
  QUANTITY_RANGE_ERROR,
  QUANTITY_SUFFIX_ERROR,
} from "./quantity.ts";

const GI = 1n << 30n;

Deno.test("parseQuantity() reads every suffix family to an exact byte count", () => {
  const cases: [string, bigint][] = [
    ["0", 0n],
    ["1", 1n],
    ["1500", 1500n],
    ["+5", 5n],
    ["-1", -1n],
    ["007", 7n],
    ["1k", 1000n],
    ["1M", 1_000_000n],
    ["1G", 1_000_000_000n],
    ["1T", 10n ** 12n],
    ["1P", 10n ** 15n],
    ["1E", 10n ** 18n],
    ["1Ki", 1024n],
    ["1Mi", 1n << 20n],
    ["10Gi", 10n * GI],
    ["1Ti", 1n << 40n],
    ["1Pi", 1n << 50n],
    ["1Ei", 1n << 60n],
    ["1e9", 1_000_000_000n],
    ["1E9", 1_000_000_000n],
    ["1e+3", 1000n],
    ["2.5e3", 2500n],
    ["1.5Gi", 3n * (GI / 2n)],
    [".5Ki", 512n],
    ["1.", 1n],
    ["1.Gi", GI],
  ];
  for (const [text, bytes] of cases) {
    deepStrictEqual(parseQuantity(text), { ok: true, value: bytes }, text);
  }
});

Deno.test("parseQuantity() rounds fractional bytes up like Quantity.Value()", () => {
  const cases: [string, bigint][] = [
    ["1500m", 2n],
    ["1000m", 1n],
    ["1m", 1n],
    ["1n", 1n],
    ["1u", 1n],
    ["0.1", 1n],
    ["1.0001", 2n],
    ["1e-3", 1n],
    ["1.5Ki", 1536n],
    ["1.0000001Ki", 1025n],
    ["-1.5", -2n],
    ["1e-5000", 1n],
  ];
  for (const [text, bytes] of cases) {
    deepStrictEqual(parseQuantity(text), { ok: true, value: bytes }, text);
  }
});

Deno.test("parseQuantity() keeps sizes beyond int64 exact instead of capping them", () => {
  deepStrictEqual(parseQuantity("8Ei"), { ok: true, value: 1n << 63n });
  deepStrictEqual(parseQuantity("9223372036854775807"), { ok: true, value: MAX_INT64 });
  deepStrictEqual(parseQuantity("1e30"), { ok: true, value: 10n ** 30n });
});

Deno.test("parseQuantity() accepts apimachinery's odd corner cases", () => {
  // parseQuantityString treats a lone sign, dot or suffix as zero.
  deepStrictEqual(parseQuantity("-"), { ok: true, value: 0n });
  deepStrictEqual(parseQuantity("Gi"), { ok: true, value: 0n });
  deepStrictEqual(parseQuantity("."), { ok: true, value: 0n });
  deepStrictEqual(parseQuantity("0.000"), { ok: true, value: 0n });
});

Deno.test("parseQuantity() rejects malformed text with apimachinery's messages", () => {
  const cases: [string, string][] = [
    ["", QUANTITY_FORMAT_ERROR],
    ["abc", QUANTITY_FORMAT_ERROR],
    ["1 Gi", QUANTITY_FORMAT_ERROR],
    ["1.2.3", QUANTITY_FORMAT_ERROR],
    ["1Kib", QUANTITY_FORMAT_ERROR],
    ["1K", QUANTITY_SUFFIX_ERROR],
    ["1e", QUANTITY_SUFFIX_ERROR],
    ["1Gi5", QUANTITY_SUFFIX_ERROR],
    ["1ee3", QUANTITY_SUFFIX_ERROR],
    ["+-1", QUANTITY_SUFFIX_ERROR],
    ["1e2000", QUANTITY_RANGE_ERROR],
  ];
  for (const [text, error] of cases) {
    deepStrictEqual(parseQuantity(text), { ok: false, error }, JSON.stringify(text));
  }
});

Deno.test("parseQuantity() error for a bad format quotes Kubernetes' regular expression", () => {
  strictEqual(
    QUANTITY_FORMAT_ERROR,
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
  );
  strictEqual(QUANTITY_SUFFIX_ERROR, "unable to parse quantity's suffix");
});

Deno.test("formatBinarySI() prints the largest binary suffix that divides exactly", () => {
  const cases: [bigint, string][] = [
    [0n, "0"],
    [1n, "1"],
    [100n, "100"],
    [1023n, "1023"],
    [1024n, "1Ki"],
    [1500n, "1500"],
    [1536n, "1536"],
    [2048n, "2Ki"],
    [1024n * 1000n, "1000Ki"],
    [1536n * 1024n, "1536Ki"],
    [1n << 20n, "1Mi"],
    [GI, "1Gi"],
    [10n * GI, "10Gi"],
    [1n << 40n, "1Ti"],
    [1n << 50n, "1Pi"],
    [1n << 60n, "1Ei"],
    [7n << 60n, "7Ei"],
    [MAX_INT64, "9223372036854775807"],
    [1_000_000_000n, "1000000000"],
    [-2048n, "-2Ki"],
  ];
  for (const [bytes, text] of cases) strictEqual(formatBinarySI(bytes), text, String(bytes));
});

Deno.test("formatBinarySI() uses the DecimalSI form below 1024, as Kubernetes does", () => {
  strictEqual(formatBinarySI(1000n), "1k");
  strictEqual(formatBinarySI(-1000n), "-1k");
  strictEqual(formatBinarySI(1020n), "1020");
  strictEqual(formatBinarySI(-5n), "-5");
});

Deno.test("formatBinarySI() output parses back to the same byte count", () => {
  for (const bytes of [1n, 999n, 1000n, 1024n, 1536n, 123456789n, 5n * GI, MAX_INT64]) {
    deepStrictEqual(parseQuantity(formatBinarySI(bytes)), { ok: true, value: bytes });
  }
});
