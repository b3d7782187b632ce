/**
 * The Prometheus registry of one agent process. Metric names, labels and
 * buckets match the Go sidecar so that existing dashboards keep working.
 */
import { collectDefaultMetrics, Histogram, Registry } from "prom-client";
import type { CsiCallObserver } from "../csi/connection.ts";

/** Upstream csi-lib-utils' buckets for csi_sidecar_operations_seconds. */
export const CSI_OPERATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600];

/** The registry plus the observers other modules are given. */
export interface Metrics {
  registry: Registry;
  csiCalls: CsiCallObserver;
  /** The exposition text and its content type. */
  render(): Promise<{ body: string; contentType: string }>;
}

/** Creates a registry with process metrics and the CSI call histogram. */
export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics ?? true) {
    // prom-client samples event-loop delay every 10 ms by default: a third of an idle agent's
    // CPU on every node. Once a second is enough to see a stalled loop.
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1000 });
  }
  const operations = new Histogram({
    name: "csi_sidecar_operations_seconds",
    help: "Container Storage Interface operation duration with gRPC error code status total",
    labelNames: ["driver_name", "method_name", "grpc_status_code"],
    buckets: CSI_OPERATION_BUCKETS,
    registers: [registry],
  });
  return {
    registry,
    csiCalls: {
      observe: ({ driverName, method, code, seconds }) =>
        operations.observe(
          { driver_name: driverName, method_name: method, grpc_status_code: code },
          seconds,
        ),
    },
    render: async () => ({ body: await registry.metrics(), contentType: registry.contentType }),
  };
}
