/**
 * Capacity metrics: upstream's three csistoragecapacities_* gauges (same
 * names and help texts, no labels, computed when scraped as upstream's
 * collector does), plus what upstream lacks to see stale capacity: when each
 * class was last published, GetCapacity failures, and the writes made.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { CapacityCounts } from "./plan/desired.ts";

/** What the controller reports as it works. */
export interface CapacitySyncMetrics {
  /** The class's object was confirmed to hold what GetCapacity answered (written or unchanged). */
  published(storageClass: string, atMs: number): void;
  getCapacityFailed(storageClass: string): void;
  wrote(storageClass: string, operation: "create" | "update" | "delete"): void;
  /** The class no longer gets an object: its series go. */
  forget(storageClass: string): void;
  /** Someone else overwrote the class's object since this agent wrote it. */
  foreignWrite?(storageClass: string): void;
}

/** Registers the families in `registry` (once per registry); the gauges call `counts` when scraped. */
export function createCapacityMetrics(
  registry: Registry,
  counts: () => CapacityCounts,
): CapacitySyncMetrics {
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect(this: Gauge) {
        this.set(read());
      },
    });
  gauge(
    "csistoragecapacities_desired_goal",
    "Number of CSIStorageCapacity objects that are supposed to be managed automatically.",
    () => counts().goal,
  );
  gauge(
    "csistoragecapacities_desired_current",
    "Number of CSIStorageCapacity objects that exist and are supposed to be managed automatically.",
    () => counts().current,
  );
  gauge(
    "csistoragecapacities_obsolete",
    "Number of CSIStorageCapacity objects that exist and will be deleted automatically. Objects that exist and may need an update are not considered obsolete and therefore not included in this value.",
    () => counts().obsolete,
  );
  const lastPublish = new Gauge({
    name: "csistoragecapacities_last_publish_timestamp_seconds",
    help:
      "Unix time when the CSIStorageCapacity object of a storage class on this node was last confirmed to hold the capacity the driver reports (written, or already equal). Alert on time() minus this exceeding the poll interval: the published capacity is stale.",
    labelNames: ["storageclass"] as const,
    registers: [registry],
  });
  const getCapacityErrors = new Counter({
    name: "csistoragecapacities_getcapacity_errors_total",
    help: "Number of failed CSI GetCapacity calls, by storage class.",
    labelNames: ["storageclass"] as const,
    registers: [registry],
  });
  const writes = new Counter({
    name: "csistoragecapacities_writes_total",
    help:
      "Number of CSIStorageCapacity writes sent by this node's agent, by storage class and operation (create, update, delete).",
    labelNames: ["storageclass", "operation"] as const,
    registers: [registry],
  });
  const foreignWrites = new Counter({
    name: "csistoragecapacities_foreign_writes_total",
    help:
      "Times the CSIStorageCapacity object of a storage class on this node was found overwritten by someone else since this agent wrote it (capacity or owner): a second agent with the same NODE_NAME. Each is also a Warning Event DuplicateAgent on the object.",
    labelNames: ["storageclass"] as const,
    registers: [registry],
  });
  return {
    foreignWrite: (storageClass) => foreignWrites.inc({ storageclass: storageClass }),
    published: (storageClass, atMs) => lastPublish.set({ storageclass: storageClass }, atMs / 1000),
    getCapacityFailed: (storageClass) => getCapacityErrors.inc({ storageclass: storageClass }),
    wrote: (storageClass, operation) => writes.inc({ storageclass: storageClass, operation }),
    forget: (storageClass) => lastPublish.remove({ storageclass: storageClass }),
  };
}
