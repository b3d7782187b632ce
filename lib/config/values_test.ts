import { deepStrictEqual } from "node:assert/strict";
import {
  parseGoBool,
  parseGoDuration,
  parseGoFloat,
  parseGoInt,
  parseKeyValueList,
} from "./values.ts";

Deno.test("parseGoDuration() accepts Go's syntax and returns milliseconds", () => {
  const cases: [string, number][] = [
    ["1m30s", 90_000],
    ["300ms", 300],
    ["10s", 10_000],
    ["1.5h", 5_400_000],
    ["-2s", -2000],
    ["0", 0],
    ["1h2m3s4ms", 3_723_004],
    ["1500us", 1.5],
    ["20µs", 0.02],
  ];
  for (const [text, ms] of cases) {
    deepStrictEqual(parseGoDuration(text), { ok: true, value: ms }, text);
  }
});

Deno.test("parseGoDuration() rejects durations Go rejects, with Go's message", () => {
  deepStrictEqual(parseGoDuration("10"), {
    ok: false,
    error: 'time: missing unit in duration "10"',
  });
  for (const text of ["", "abc", "1x", "s", "1m30", "--1s"]) {
    deepStrictEqual(parseGoDuration(text).ok, false, text);
  }
});

Deno.test("parseGoBool() accepts exactly strconv.ParseBool's spellings", () => {
  for (const text of ["1", "t", "T", "true", "TRUE", "True"]) {
    deepStrictEqual(parseGoBool(text), { ok: true, value: true });
  }
  for (const text of ["0", "f", "F", "false", "FALSE", "False"]) {
    deepStrictEqual(parseGoBool(text), { ok: true, value: false });
  }
  for (const text of ["yes", "", "tRue", "2"]) deepStrictEqual(parseGoBool(text).ok, false, text);
});

Deno.test("parseGoInt() accepts base prefixes and signs and rejects the rest", () => {
  const cases: [string, number][] = [
    ["100", 100],
    ["-1", -1],
    ["0x10", 16],
    ["0o17", 15],
    [
      "017",
      15,
    ],
    ["0b101", 5],
    ["1_000", 1000],
  ];
  for (const [text, value] of cases) deepStrictEqual(parseGoInt(text), { ok: true, value }, text);
  for (const text of ["", "1.5", "ten", "1e3", "99999999999999999999"]) {
    deepStrictEqual(parseGoInt(text).ok, false, text);
  }
});

Deno.test("parseGoFloat() accepts decimals and exponents", () => {
  deepStrictEqual(parseGoFloat("5"), { ok: true, value: 5 });
  deepStrictEqual(parseGoFloat("0.5"), { ok: true, value: 0.5 });
  deepStrictEqual(parseGoFloat("1e3"), { ok: true, value: 1000 });
  deepStrictEqual(parseGoFloat("fast").ok, false);
});

Deno.test("parseKeyValueList() splits feature gates and labels and names a bad item", () => {
  deepStrictEqual(parseKeyValueList("A=true, B=false", "="), {
    ok: true,
    value: [["A", "true"], ["B", "false"]],
  });
  deepStrictEqual(parseKeyValueList("app:agent,tier:node", ":"), {
    ok: true,
    value: [["app", "agent"], ["tier", "node"]],
  });
  deepStrictEqual(parseKeyValueList("A=true,B", "="), { ok: false, error: 'missing "=" in "B"' });
});
