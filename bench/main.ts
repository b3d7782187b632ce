/**
 * `deno task bench`: every scenario, ours vs upstream, one after the other;
 * `deno task bench:<scenario>` runs one (the scenario ids are arguments here).
 * Prints one table and writes it to bench/results/latest.md. See bench/README.md.
 *
 *   deno run -A bench/main.ts [startup|burst|default-budget|memory-at-scale|capacity|immediate|fleet ...] [--runs N]
 */
import { BURST, DEFAULT_BUDGET } from "./burst.ts";
import { CAPACITY } from "./capacity.ts";
import { FLEET } from "./fleet.ts";
import { IMMEDIATE } from "./immediate.ts";
import { parseBenchArgs, runScenarios } from "./cli.ts";
import { MEMORY_AT_SCALE } from "./memory_at_scale.ts";
import type { Scenario } from "./scenario.ts";
import { STARTUP } from "./startup.ts";

export const SCENARIOS: readonly Scenario[] = [
  STARTUP,
  BURST,
  DEFAULT_BUDGET,
  MEMORY_AT_SCALE,
  CAPACITY,
  IMMEDIATE,
  FLEET,
];

/** The named scenarios in table order, or all of them; throws on an unknown name. */
export function selectScenarios(names: readonly string[]): Scenario[] {
  const unknown = names.filter((name) => !SCENARIOS.some((scenario) => scenario.id === name));
  if (unknown.length > 0) {
    const known = SCENARIOS.map((scenario) => scenario.id).join(", ");
    throw new Error(`unknown scenario ${unknown.join(", ")}; known: ${known}`);
  }
  return names.length === 0
    ? [...SCENARIOS]
    : SCENARIOS.filter((scenario) => names.includes(scenario.id));
}

if (import.meta.main) {
  const scenarios = selectScenarios(parseBenchArgs(Deno.args).scenarios);
  await runScenarios(scenarios, Deno.args);
}
