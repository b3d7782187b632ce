/**
 * The metric names a PromQL expression reads, for checking them against an
 * agent's /metrics. A small lexer, not a parser: strings, label matchers,
 * range selectors and label lists (by, without, on, ignoring, group_*) are
 * dropped, and of the identifiers left, those followed by "(" are
 * functions and the operators are keywords. promtool checks the syntax.
 */

const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "inf", "nan", "atan2"]);

export function metricNames(expression: string): string[] {
  const text = expression
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, " ")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set<string>();
  for (const match of text.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const start = match.index!;
    const rest = text.slice(start + match[0].length);
    // A function call, or the exponent or unit of a number (1e3, 5m).
    if (/^\s*\(/.test(rest) || /[0-9.]/.test(text[start - 1] ?? "")) continue;
    if (KEYWORDS.has(match[0].toLowerCase())) continue;
    names.add(match[0]);
  }
  return [...names];
}

/** What a /metrics exposition offers: every series name, with histograms' and summaries' parts. */
export function exposedNames(exposition: string): { names: Set<string>; families: Set<string> } {
  const names = new Set<string>();
  const families = new Set<string>();
  for (const line of exposition.split("\n")) {
    const type = line.match(/^# TYPE (\S+) (\S+)/);
    if (type) {
      const [, family, kind] = type as unknown as [string, string, string];
      families.add(family);
      names.add(family);
      if (kind === "histogram") {
        for (const part of ["_bucket", "_sum", "_count"]) names.add(family + part);
      }
      if (kind === "summary") { for (const part of ["_sum", "_count"]) names.add(family + part); }
      continue;
    }
    const series = line.match(/^([A-Za-z_:][A-Za-z0-9_:]*)[{ ]/);
    if (series) names.add(series[1]!);
  }
  return { names, families };
}
