import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { MetricSamples } from "./report.ts";
import { gaugeMax, soakMetrics, soakNotes, type SoakRunOutcome } from "./soak_report.ts";
import type { SoakSample } from "./soak_series.ts";

function outcome(node: string, gauges: (t: number) => Record<string, number>): SoakRunOutcome {
  // RSS 50 during warm-up (t < 30), then 100, 101, 102: 240 MiB/h, 2 % drift; of it,
  // anonymous 40, 40, 50, 51, 52 (4 % drift) and file pages 10, 10, 50, 50, 50 (flat);
  // CPU 1 s at the start, 4 at the end of warm-up and 9 at the end.
  const rss = [50, 50, 100, 101, 102];
  const samples: SoakSample[] = rss.map((rssMiB, index) => ({
    t: index * 15,
    rssMiB,
    rssAnonMiB: [40, 40, 50, 51, 52][index]!,
    rssFileMiB: [10, 10, 50, 50, 50][index]!,
    fds: [20, 22, 21, 25, 23][index]!,
    csi: 1,
    threads: 8 + index,
    cpuS: [1, 2, 4, 6, 9][index]!,
    gauges: gauges(index * 15),
  }));
  return {
    node,
    samples,
    counts: { created: 60, createFailures: 0, bound: 59, deleted: 58 },
    volumesLeft: 0,
  };
}

const RUN = {
  ours: outcome("node-a", (t) => ({
    nodejs_active_handles_total: 0,
    nodejs_active_resources_total: 0,
    nodejs_heap_size_used_bytes: (10 + t) * 1024 * 1024,
  })),
  upstream: outcome("node-z", () => ({ go_goroutines: 268 })),
};

function row(metrics: MetricSamples[], prefix: string): MetricSamples {
  const found = metrics.find((metric) => metric.metric.startsWith(prefix));
  if (found === undefined) throw new Error(`no row ${prefix}`);
  return found;
}

Deno.test("soakMetrics() reads RSS at warm-up end and end, the trend, ranges and counts", () => {
  const metrics = soakMetrics([RUN], { warmupS: 30 });
  deepStrictEqual(row(metrics, "RSS at the end of warm-up").ours, [100]);
  deepStrictEqual(row(metrics, "RSS at the end (MiB)").upstream, [102]);
  strictEqual(Math.round(row(metrics, "RSS slope").ours[0]!), 240);
  strictEqual(Math.round(row(metrics, "RSS drift").ours[0]! * 100) / 100, 2);
  strictEqual(Math.round(row(metrics, "… drift of its anonymous part").ours[0]! * 100) / 100, 4);
  strictEqual(Math.round(row(metrics, "… drift of its file-backed part").ours[0]! * 100) / 100, 0);
  deepStrictEqual(row(metrics, "CPU over the stream").ours, [8]);
  deepStrictEqual(row(metrics, "… of it after warm-up").upstream, [5]);
  deepStrictEqual(row(metrics, "open file descriptors: min").ours, [20]);
  deepStrictEqual(row(metrics, "open file descriptors: max").ours, [25]);
  deepStrictEqual(row(metrics, "open file descriptors: end").ours, [23]);
  deepStrictEqual(row(metrics, "threads at the end").upstream, [12]);
  deepStrictEqual(row(metrics, "claims Bound").ours, [59]);
  deepStrictEqual(row(metrics, "volumes left").upstream, [0]);
});

Deno.test("soakMetrics() gives each gauge row to the agent that exposes it only", () => {
  const metrics = soakMetrics([RUN], { warmupS: 30 });
  const goroutines = row(metrics, "goroutines (upstream: go_goroutines) at the end of warm-up");
  deepStrictEqual([goroutines.ours, goroutines.upstream], [[], [268]]);
  const heap = row(metrics, "JS heap used (ours: nodejs_heap_size_used_bytes, MiB) at the end");
  deepStrictEqual(heap.upstream, []);
  deepStrictEqual(
    row(metrics, "JS heap used (ours: nodejs_heap_size_used_bytes, MiB) at the end of warm-up")
      .ours,
    [40],
  );
});

Deno.test("soakNotes() says when ours' handle gauges never moved from 0", () => {
  strictEqual(gaugeMax([RUN], "upstream", "go_goroutines"), 268);
  strictEqual(Number.isNaN(gaugeMax([RUN], "upstream", "nodejs_active_handles_total")), true);
  const notes = soakNotes([RUN], {
    fixture: { createMs: 200_000, boundMs: 250_000 },
    minutes: 1,
    pairs: 10_000,
    qps: 50,
    burst: 100,
    intervalMs: 15_000,
    lifetimeMs: 5_000,
    drainMs: 180_000,
  });
  strictEqual(notes.some((note) => note.includes("0 in every sample")), true);
  strictEqual(notes.some((note) => note.includes("ours on node-a, upstream on node-z")), true);
});
