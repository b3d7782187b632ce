/**
 * The process metrics: prom-client's default metrics (prom-client
 * lib/defaultMetrics.js, collectDefaultMetrics) registered one by one, all
 * but the heap-space statistics. Those call v8.getHeapSpaceStatistics(),
 * which Bun answers by walking JavaScriptCore's heap: about 1.5 ms when
 * registered and 1 ms at every scrape, for 39 series named after V8's heap
 * spaces that JavaScriptCore does not have. The names and help of the rest
 * are prom-client's, so dashboards written for Node processes keep working.
 *
 * prom-client exports only collectDefaultMetrics(), all or nothing; these
 * are its per-metric modules (plain CommonJS, untyped here), pinned with the
 * package by package-lock.json. process_metrics_test.ts lists the names.
 */
import type { Registry } from "prom-client";
import eventLoopLag from "prom-client/lib/metrics/eventLoopLag.js";
import gc from "prom-client/lib/metrics/gc.js";
import heapSizeAndUsed from "prom-client/lib/metrics/heapSizeAndUsed.js";
import osMemoryHeap from "prom-client/lib/metrics/osMemoryHeap.js";
import processCpuTotal from "prom-client/lib/metrics/processCpuTotal.js";
import processHandles from "prom-client/lib/metrics/processHandles.js";
import processMaxFileDescriptors from "prom-client/lib/metrics/processMaxFileDescriptors.js";
import processOpenFileDescriptors from "prom-client/lib/metrics/processOpenFileDescriptors.js";
import processRequests from "prom-client/lib/metrics/processRequests.js";
import processResources from "prom-client/lib/metrics/processResources.js";
import processStartTime from "prom-client/lib/metrics/processStartTime.js";
import version from "prom-client/lib/metrics/version.js";

type Collector = (registry: Registry, config: Record<string, unknown>) => void;

const COLLECTORS: readonly Collector[] = [
  processCpuTotal,
  processStartTime,
  osMemoryHeap,
  processOpenFileDescriptors,
  processMaxFileDescriptors,
  eventLoopLag,
  processResources,
  processHandles,
  processRequests,
  heapSizeAndUsed,
  version,
  gc,
];

/** Registers the process metrics in `registry`. */
export function registerProcessMetrics(registry: Registry): void {
  // prom-client samples event-loop delay every 10 ms by default: a third of an idle agent's
  // CPU on every node. Once a second is enough to see a stalled loop.
  const config = { eventLoopMonitoringPrecision: 1000 };
  for (const collect of COLLECTORS) collect(registry, config);
}
