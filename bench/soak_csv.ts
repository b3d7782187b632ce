/**
 * Prints the soak scenario's time series from a results file as CSV:
 *
 *   deno run -A bench/soak_csv.ts [bench/results/latest.md] > soak.csv
 *
 * One line per sample: the series (agent, run, node), seconds since the
 * stream started, VmRSS MiB (and its anonymous and file parts), open fds,
 * CSI connections, threads, CPU seconds since the process started and the
 * agent's /metrics gauges (blank where the agent has none).
 */
import { parseResults, RESULTS_PATH } from "./results_file.ts";
import type { SeriesColumns } from "./soak_series.ts";
import { seriesCsv } from "./soak_series.ts";

if (import.meta.main) {
  const path = Deno.args[0] ?? RESULTS_PATH;
  const soak = parseResults(await Deno.readTextFile(path)).find((result) => result.id === "soak");
  const series = (soak as { series?: Record<string, SeriesColumns> } | undefined)?.series;
  if (series === undefined) {
    console.error(`${path} has no soak series (run deno task bench:soak)`);
    Deno.exit(1);
  }
  Deno.stdout.writeSync(new TextEncoder().encode(seriesCsv(series)));
}
