/**
 * `deno task bench`: every scenario, ours vs upstream, one after the other;
 * `deno task bench:<scenario>` runs one (the scenario ids are arguments here).
 * Prints one table and writes it to bench/results/latest.md. See bench/README.md.
 *
 *   deno run -A bench/main.ts [startup|burst|default-budget|memory-at-scale|capacity|immediate|fleet|soak ...] [--runs N]
 */
import { BURST, DEFAULT_BUDGET } from "./burst.ts";
import { CAPACITY } from "./capacity.ts";
import { FLEET } from "./fleet.ts";
import { IMMEDIATE } from "./immediate.ts";
import { parseBenchArgs, runScenarios } from "./cli.ts";
import { MEMORY_AT_SCALE } from "./memory_at_scale.ts";
import type { Scenario } from "./scenario.ts";
import { SOAK } from "./soak.ts";
import { STARTUP } from "./startup.ts";

export const SCENARIOS: readonly Scenario[] = [
  STARTUP,
  BURST,
  DEFAULT_BUDGET,
  MEMORY_AT_SCALE,
  CAPACITY,
  IMMEDIATE,
  FLEET,
  SOAK,
];

/**
 * The named scenarios of `from` (default: every scenario) in its order, or
 * `defaults` (default: all of `from`) when none is named; throws on an
 * unknown name, so a typo never runs nothing.
 */
export function selectScenarios(
  names: readonly string[],
  options: { from?: readonly Scenario[]; defaults?: readonly Scenario[] } = {},
): Scenario[] {
  const from = options.from ?? SCENARIOS;
  const unknown = names.filter((name) => !from.some((scenario) => scenario.id === name));
  if (unknown.length > 0) {
    const known = from.map((scenario) => scenario.id).join(", ");
    throw new Error(`unknown scenario ${unknown.join(", ")}; known: ${known}`);
  }
  return names.length === 0
    ? [...options.defaults ?? from]
    : from.filter((scenario) => names.includes(scenario.id));
}

if (import.meta.main) {
  const scenarios = selectScenarios(parseBenchArgs(Deno.args).scenarios);
  await runScenarios(scenarios, Deno.args);
}
