/**
 * Readable differences between two JSON objects, for tests that compare what
 * two provisioners produced: both are printed as indented JSON with sorted
 * keys, and the differing lines are shown like a unified diff.
 */

/** JSON with object keys sorted at every level, two-space indented. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, field]) => field !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, field]) => [key, sortKeys(field)]));
}

/**
 * The lines of `expected` and `actual` that differ, `-` for expected only and
 * `+` for actual only, with two lines of context; "" when they are equal.
 */
export function lineDiff(expected: string, actual: string, context = 2): string {
  const a = expected.split("\n");
  const b = actual.split("\n");
  const script = editScript(a, b);
  if (script.every((edit) => edit.op === " ")) return "";
  const keep = script.map((_edit, index) =>
    script.slice(Math.max(0, index - context), index + context + 1).some((e) => e.op !== " ")
  );
  const lines: string[] = [];
  script.forEach((edit, index) => {
    if (keep[index]) lines.push(`${edit.op} ${edit.line}`);
    else if (keep[index - 1]) lines.push("  ...");
  });
  return lines.join("\n");
}

interface Edit {
  op: " " | "-" | "+";
  line: string;
}

/** A shortest edit script from the longest common subsequence of lines. */
function editScript(a: string[], b: string[]): Edit[] {
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j]
        ? lcs[i + 1]![j + 1]! + 1
        : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const script: Edit[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      script.push({ op: " ", line: a[i++]! });
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      script.push({ op: "-", line: a[i++]! });
    } else {
      script.push({ op: "+", line: b[j++]! });
    }
  }
  return script;
}

/** Which side is which, in a difference's heading. */
export interface DiffNames {
  what: string;
  actualName?: string;
  expectedName?: string;
}

/** "" when the two values are equal (as canonical JSON), else a heading and the line diff. */
export function describeDifference(actual: unknown, expected: unknown, names: DiffNames): string {
  const diff = lineDiff(canonicalJson(expected), canonicalJson(actual));
  if (diff === "") return "";
  const sides = `- ${names.expectedName ?? "expected"}, + ${names.actualName ?? "actual"}`;
  return `${names.what} differ (${sides}):\n${diff}`;
}

/** Throws with a readable diff when the two values differ (as canonical JSON). */
export function assertSameJson(actual: unknown, expected: unknown, names: DiffNames): void {
  const difference = describeDifference(actual, expected, names);
  if (difference !== "") throw new Error(difference);
}
