/**
 * `deno task bench:floor-claim`: the per-claim floor. Compiles
 * bench/floor/per_claim.ts with the agent's build flags and runs the burst and
 * default-budget scenarios (or those named: burst, default-budget, fleet)
 * with it in the agent's place ("ours" in the results is that program, and
 * every scenario's notes say so), against upstream on the same clusters. Its
 * CPU and peak RSS per claim are what Bun, fetch, grpc-js and JSON cost for
 * the requests and watch events a claim needs, with none of the agent's own
 * work; in the fleet, what the API server must spend on agents that do no
 * more than that; the agent's figures in bench/results/latest.md read
 * against them.
 *
 *   deno task bench:floor-claim [-- [SCENARIO ...] --runs N --results PATH]
 *     (default 3 runs each, bench/results/floor_claim.md)
 */
import { join } from "node:path";
import { recordBytecodeOrder } from "../tests/deploy/bytecode_recording.ts";
import { BURST, DEFAULT_BUDGET } from "./burst.ts";
import { parseBenchArgs, runScenarios } from "./cli.ts";
import { FLEET } from "./fleet.ts";
import { compileOrderedFloor } from "./floor.ts";
import { selectScenarios } from "./main.ts";

const REPO = new URL("..", import.meta.url).pathname;
const NOTE = 'Here "ours" is NOT the agent: it is the per-claim floor program ' +
  "(bench/floor/per_claim.ts, compiled as the agent is, bytecode order included): " +
  "the agent's watches, CreateVolume, the PV and the two Events through the agent's own " +
  "transport modules, and nothing else (no decisions, journal, metrics, logs or work queue; " +
  "a failed claim is tried again after a second; with --enable-capacity, one " +
  "CSIStorageCapacity per class written at start and never updated).";

/** The per-claim program's order comes from a run through claims, as the agent's does. */
function compileOrderedPerClaim(outDir: string): Promise<string> {
  const log = (line: string) => console.error(line);
  return compileOrderedFloor("per_claim", {
    outDir,
    record: async (binary, orderOut) => {
      const entries = await recordBytecodeOrder({ binary, orderOut, deletesVolumes: false }, log);
      log(`per_claim: ${entries.length} functions and modules in its recorded order`);
    },
  });
}

if (import.meta.main) {
  const outDir = await Deno.makeTempDir({ prefix: "bench-floor-claim-" });
  try {
    // tests/cluster/agents.ts oursBinary() reads this when each agent starts.
    Deno.env.set("CSI_NODE_PROVISIONER_BIN", await compileOrderedPerClaim(outDir));
    const defaults = ["--results", join(REPO, "bench/results/floor_claim.md")];
    const scenarios = selectScenarios(parseBenchArgs(Deno.args).scenarios, {
      from: [BURST, DEFAULT_BUDGET, FLEET],
      defaults: [BURST, DEFAULT_BUDGET],
    });
    await runScenarios(scenarios, [...defaults, ...Deno.args, "--note", NOTE]);
  } finally {
    await Deno.remove(outDir, { recursive: true });
  }
}
