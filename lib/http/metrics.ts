/**
 * The Prometheus registry of one agent process. Metric names, labels and
 * buckets match the Go sidecar so that existing dashboards keep working.
 */
import { Gauge, Histogram, Registry } from "prom-client";
import type { CsiCallObserver } from "../csi/connection.ts";
import { registerProcessMetrics } from "./process_metrics.ts";

/** Upstream csi-lib-utils' buckets for csi_sidecar_operations_seconds. */
const CSI_OPERATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600];

/** The registry plus the observers other modules are given. */
export interface Metrics {
  registry: Registry;
  csiCalls: CsiCallObserver;
  /** A readiness condition became met or not (csi_node_provisioner_ready). */
  readyCondition(condition: string, met: boolean): void;
  /** The driver's background Probe succeeded in time or not (csi_node_provisioner_driver_ready). */
  driverReady(ready: boolean): void;
  /** The exposition text and its content type. */
  render(): Promise<{ body: string; contentType: string }>;
}

/** Creates a registry with process metrics and the CSI call histogram. */
export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics ?? true) registerProcessMetrics(registry);
  const operations = new Histogram({
    name: "csi_sidecar_operations_seconds",
    help: "Container Storage Interface operation duration with gRPC error code status total",
    labelNames: ["driver_name", "method_name", "grpc_status_code"],
    buckets: CSI_OPERATION_BUCKETS,
    registers: [registry],
  });
  const ready = new Gauge({
    name: "csi_node_provisioner_ready",
    help:
      "1 when the readiness condition is met (csi: the driver answers Probe in time; informers: every informer lists and watches; capacity: published once; journal: the intent journal is locked, loaded and writable; apiserver: start-up's calls answered), else 0. /readyz is ready when all are 1.",
    labelNames: ["condition"] as const,
    registers: [registry],
  });
  const driverReady = new Gauge({
    name: "csi_node_provisioner_driver_ready",
    help:
      "1 when the CSI driver answered the agent's last background Probe (every 10 s) with ready within 5 s, else 0.",
    registers: [registry],
  });
  return {
    registry,
    readyCondition: (condition, met) => ready.set({ condition }, met ? 1 : 0),
    driverReady: (isReady) => driverReady.set(isReady ? 1 : 0),
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
