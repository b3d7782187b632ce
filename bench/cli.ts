/**
 * Shared command line of `deno task bench` and `deno task bench:<scenario>`:
 * runs the scenarios one after the other, records each in
 * bench/results/latest.md as soon as it is done, and prints one table.
 *
 *   [SCENARIO ...]  scenario ids (main.ts only; default: all)
 *   --runs N        runs per agent (default: each scenario's own, at least 3)
 *   --results PATH  results file (default bench/results/latest.md)
 *   --note TEXT     added to every scenario's notes (repeatable), e.g. how ours was built
 *   --nodes N, --claims M  the size of a scenario that takes one (fleet); others ignore them
 *   --minutes M     length of a timed scenario (soak: its claim stream; default its own)
 *   --apiserver-profile DIR  fleet: CPU profiles of kube-apiserver over the first 50 s of
 *                   the burst and of the idle minute, two pprof files per run in DIR
 *                   (profiling costs it some CPU: not for the runs whose figures are kept)
 */
import { parseArgs } from "node:util";
import { comparisonTable, type ScenarioResult } from "./report.ts";
import { recordScenario, RESULTS_PATH } from "./results_file.ts";
import type { Scenario } from "./scenario.ts";

export interface BenchArgs {
  /** Scenario ids named on the command line. */
  scenarios: string[];
  runs: number | undefined;
  resultsPath: string;
  notes: string[];
  /** --nodes and --claims, when given. */
  nodes?: number;
  claims?: number;
  /** --minutes: how long a timed scenario runs (soak), when given. */
  minutes?: number;
  /** --apiserver-profile: where the fleet writes kube-apiserver's CPU profiles, when given. */
  apiServerProfileDir?: string;
}

function positiveInteger(flag: string, value: string | undefined): number | undefined {
  const number = value === undefined ? undefined : Number(value);
  if (number !== undefined && (!Number.isInteger(number) || number < 1)) {
    throw new Error(`--${flag} must be a positive integer, not "${value}"`);
  }
  return number;
}

export function parseBenchArgs(args: readonly string[]): BenchArgs {
  const { values, positionals } = parseArgs({
    args: args.filter((arg) => arg !== "--"),
    allowPositionals: true,
    options: {
      runs: { type: "string" },
      results: { type: "string", default: RESULTS_PATH },
      note: { type: "string", multiple: true, default: [] },
      nodes: { type: "string" },
      claims: { type: "string" },
      minutes: { type: "string" },
      "apiserver-profile": { type: "string" },
    },
  });
  const nodes = positiveInteger("nodes", values.nodes);
  const claims = positiveInteger("claims", values.claims);
  const minutes = values.minutes === undefined ? undefined : Number(values.minutes);
  if (minutes !== undefined && !(minutes > 0)) {
    throw new Error(`--minutes must be a positive number, not "${values.minutes}"`);
  }
  return {
    scenarios: positionals,
    runs: positiveInteger("runs", values.runs),
    resultsPath: values.results,
    notes: values.note,
    ...(nodes === undefined ? {} : { nodes }),
    ...(claims === undefined ? {} : { claims }),
    ...(minutes === undefined ? {} : { minutes }),
    ...(values["apiserver-profile"] === undefined
      ? {}
      : { apiServerProfileDir: values["apiserver-profile"] }),
  };
}

/** Runs the scenarios in order and prints the table of those run; returns their results. */
export async function runScenarios(
  scenarios: readonly Scenario[],
  args: readonly string[],
): Promise<ScenarioResult[]> {
  const { runs, resultsPath, notes, scenarios: _names, ...size } = parseBenchArgs(args);
  const log = (line: string) => console.error(line);
  const done: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    const scenarioRuns = runs ?? scenario.defaultRuns;
    log(`[bench] ${scenario.id}: ${scenario.title}, ${scenarioRuns} runs per agent`);
    const result = await scenario.run({ runs: scenarioRuns, log, ...size });
    result.notes.push(...notes);
    await recordScenario(result, resultsPath);
    done.push(result);
    log(`[bench] ${scenario.id} recorded in ${resultsPath}`);
  }
  console.log(comparisonTable(done));
  return done;
}
