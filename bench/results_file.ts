/**
 * bench/results/latest.md: one comparison table over every scenario run so
 * far, a section per scenario (when, machine, load, how it was measured), and
 * the raw samples in a trailing comment. Running one scenario replaces only
 * its own part: the others are read back from that comment.
 */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { describeMachine } from "./machine.ts";
import { comparisonTable, type ScenarioResult } from "./report.ts";

export const RESULTS_PATH: string = fileURLToPath(new URL("./results/latest.md", import.meta.url));

/** Table order; scenarios not listed go last in the order they were recorded. */
export const SCENARIO_ORDER: readonly string[] = [
  "startup",
  "burst",
  "default-budget",
  "memory-at-scale",
  "capacity",
  "immediate",
];

const DATA_OPEN = "<!-- bench-data";
const DATA_CLOSE = "-->";

function sortScenarios(results: readonly ScenarioResult[]): ScenarioResult[] {
  const rank = (id: string) => {
    const index = SCENARIO_ORDER.indexOf(id);
    return index === -1 ? SCENARIO_ORDER.length : index;
  };
  return [...results].sort((a, b) => rank(a.id) - rank(b.id));
}

/** Replaces the scenario with the same id, or adds it. */
export function mergeScenario(
  results: readonly ScenarioResult[],
  result: ScenarioResult,
): ScenarioResult[] {
  return sortScenarios([...results.filter((other) => other.id !== result.id), result]);
}

function scenarioSection(result: ScenarioResult): string {
  const { machine } = result;
  const lines = [
    `### ${result.id}: ${result.title}`,
    "",
    `- Run: ${result.date}, ${result.runs} runs per agent, ours and upstream alternating.`,
    `- Machine: ${describeMachine(machine)}; load average (1/5/15 min) ${
      machine.loadBefore.join(" / ")
    } before, ${result.loadAfter.join(" / ")} after.`,
    `- Binaries: ${result.binaries.join("; ")}.`,
    ...result.notes.map((note) => `- ${note}`),
  ];
  return lines.join("\n");
}

/** The whole file for these scenarios. */
export function renderResults(results: readonly ScenarioResult[]): string {
  const sorted = sortScenarios(results);
  // "-->" inside a string would end the comment early; \u003e is the same JSON string.
  const data = JSON.stringify(sorted).replaceAll("-->", "--\\u003e");
  return [
    "# Benchmark results: csi-node-provisioner (ours) vs upstream csi-provisioner",
    "",
    "Written by `deno task bench` (or `deno task bench:<scenario>`, which replaces its own rows).",
    "Median and range over the runs; the ratio is of the medians. See bench/README.md for what",
    "each metric measures. Benchmarks print, they never fail on a number.",
    "",
    comparisonTable(sorted),
    "",
    "## Scenarios",
    "",
    sorted.map(scenarioSection).join("\n\n"),
    "",
    `${DATA_OPEN} (raw samples, read back when one scenario is re-run)`,
    data,
    DATA_CLOSE,
    "",
  ].join("\n");
}

/** The scenarios recorded in a results file; none when it has no data comment. */
export function parseResults(markdown: string): ScenarioResult[] {
  const start = markdown.lastIndexOf(DATA_OPEN);
  if (start === -1) return [];
  const body = markdown.slice(markdown.indexOf("\n", start) + 1);
  const end = body.lastIndexOf(DATA_CLOSE);
  if (end === -1) return [];
  const parsed: unknown = JSON.parse(body.slice(0, end));
  if (!Array.isArray(parsed)) throw new Error("bench-data is not a list of scenarios");
  return parsed as ScenarioResult[];
}

/** Adds (or replaces) the scenario in the results file; returns every scenario now in it. */
export async function recordScenario(
  result: ScenarioResult,
  path: string = RESULTS_PATH,
): Promise<ScenarioResult[]> {
  let previous: ScenarioResult[] = [];
  try {
    previous = parseResults(await Deno.readTextFile(path));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const results = mergeScenario(previous, result);
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, renderResults(results));
  return results;
}
