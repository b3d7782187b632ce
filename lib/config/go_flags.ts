/**
 * Go `flag` package syntax over the flag table: `-flag`, `--flag`,
 * `--flag=value`, `--flag value` (not for booleans), bare booleans, `--`.
 * Unlike Go, parsing does not stop at the first problem: every problem is
 * collected so that the operator sees them all at once.
 */
import type { FlagSpec, FlagType } from "./flags.ts";
import {
  type Parsed,
  parseGoBool,
  parseGoDuration,
  parseGoFloat,
  parseGoInt,
  parseKeyValueList,
} from "./values.ts";

/** A typed flag value. */
export type FlagValue =
  | boolean
  | string
  | number
  | Record<string, boolean>
  | Record<string, string>;

/** What the command line set: typed values by flag name (absent = default). */
interface ParsedFlags {
  values: Map<string, FlagValue>;
  help: boolean;
  problems: string[];
}

/** Parses one raw value of the given type; map flags merge into `previous`. */
export function parseFlagValue(
  type: FlagType,
  text: string,
  previous?: FlagValue,
): Parsed<FlagValue> {
  switch (type) {
    case "bool":
      return parseGoBool(text);
    case "string":
      return { ok: true, value: text };
    case "int":
      return parseGoInt(text);
    case "float":
      return parseGoFloat(text);
    case "duration":
      return parseGoDuration(text);
    case "featureGates":
      return mergeFeatureGates(text, previous);
    case "labels":
      return mergeLabels(text, previous);
  }
}

function mergeFeatureGates(text: string, previous?: FlagValue): Parsed<FlagValue> {
  const pairs = parseKeyValueList(text, "=");
  if (!pairs.ok) return pairs;
  const gates: Record<string, boolean> = { ...(previous as Record<string, boolean> | undefined) };
  for (const [key, raw] of pairs.value) {
    const value = parseGoBool(raw);
    if (!value.ok) {
      return { ok: false, error: `invalid value of ${key}=${raw}, err: ${value.error}` };
    }
    gates[key] = value.value;
  }
  return { ok: true, value: gates };
}

function mergeLabels(text: string, previous?: FlagValue): Parsed<FlagValue> {
  const pairs = parseKeyValueList(text, ":");
  if (!pairs.ok) return pairs;
  return {
    ok: true,
    value: {
      ...(previous as Record<string, string> | undefined),
      ...Object.fromEntries(pairs.value),
    },
  };
}

/** Parses argv (without the program name) against the flag table. */
export function parseGoFlags(argv: readonly string[], specs: readonly FlagSpec[]): ParsedFlags {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const result: ParsedFlags = { values: new Map(), help: false, problems: [] };
  let index = 0;
  while (index < argv.length) {
    const arg = argv[index++] ?? "";
    if (arg === "--") {
      result.problems.push(...unexpected(argv.slice(index)));
      break;
    }
    if (arg.length < 2 || !arg.startsWith("-")) {
      result.problems.push(...unexpected([arg]));
      continue;
    }
    const body = arg.slice(arg.startsWith("--") ? 2 : 1);
    if (body === "" || body.startsWith("-") || body.startsWith("=")) {
      result.problems.push(`bad flag syntax: ${arg}`);
      continue;
    }
    const equals = body.indexOf("=");
    const name = equals < 0 ? body : body.slice(0, equals);
    const spec = byName.get(name);
    if (spec === undefined) {
      if (name === "help" || name === "h") result.help = true;
      else result.problems.push(`flag provided but not defined: --${name}`);
      continue;
    }
    let text = equals < 0 ? undefined : body.slice(equals + 1);
    if (text === undefined && spec.type === "bool") text = "true";
    if (text === undefined) {
      if (index >= argv.length) {
        result.problems.push(`flag needs an argument: --${name}`);
        continue;
      }
      text = argv[index++] ?? "";
    }
    const parsed = parseFlagValue(spec.type, text, result.values.get(name));
    if (parsed.ok) result.values.set(name, parsed.value);
    else {result.problems.push(
        `invalid value ${JSON.stringify(text)} for flag --${name}: ${parsed.error}`,
      );}
  }
  return result;
}

function unexpected(args: readonly string[]): string[] {
  return args.map((arg) =>
    `unexpected argument ${
      JSON.stringify(arg)
    }: the agent takes flags only (a value given to a boolean flag must be written --flag=value)`
  );
}
