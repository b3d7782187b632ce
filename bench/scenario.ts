/** The shape every benchmark scenario has, so that main.ts and the per-scenario tasks share one runner. */
import type { BenchAgent, ScenarioResult } from "./report.ts";

export interface ScenarioOptions {
  /** Runs per agent. */
  runs: number;
  /** Progress lines (stderr). */
  log: (line: string) => void;
}

export interface Scenario {
  /** The task suffix: `deno task bench:<id>`. */
  id: string;
  title: string;
  /** Runs per agent unless --runs says otherwise. */
  defaultRuns: number;
  run(options: ScenarioOptions): Promise<ScenarioResult>;
}

/** ours, upstream, ours, upstream, ...: a slow drift in the machine's load hits both alike. */
export function alternatingRuns(runs: number): { agent: BenchAgent; run: number }[] {
  return Array.from({ length: runs }, (_, run) => [
    { agent: "ours" as const, run },
    { agent: "upstream" as const, run },
  ]).flat();
}
