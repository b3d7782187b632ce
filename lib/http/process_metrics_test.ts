import { deepStrictEqual, ok } from "node:assert/strict";
import { collectDefaultMetrics, Registry } from "prom-client";
import { registerProcessMetrics } from "./process_metrics.ts";

async function namesOf(registry: Registry): Promise<string[]> {
  return (await registry.getMetricsAsJSON()).map((metric) => metric.name).sort();
}

Deno.test("the process metrics are prom-client's defaults without the heap-space statistics", async () => {
  const ours = new Registry();
  registerProcessMetrics(ours);
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  const expected = (await namesOf(defaults)).filter((name) =>
    !name.startsWith("nodejs_heap_space_")
  );
  deepStrictEqual(await namesOf(ours), expected);
  for (
    const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "process_start_time_seconds",
      "process_open_fds",
      "nodejs_eventloop_lag_p99_seconds",
      "nodejs_heap_size_used_bytes",
    ]
  ) {
    ok(expected.includes(name), `${name}: the dashboard, alerts and bench read it`);
  }
  ours.clear();
  defaults.clear();
});
