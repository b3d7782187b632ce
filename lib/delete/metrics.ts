/**
 * The controller_persistentvolume_delete_* metrics of
 * sig-storage-lib-external-provisioner, with the same names, labels and help
 * texts, counted only for PVs this node handled; and this agent's refusals.
 * The class label is the PV's class while it exists, else "other"
 * (model/metric_labels.ts).
 */
import { Counter, Histogram, type Registry } from "prom-client";
import { classLabel } from "../model/metric_labels.ts";
import type { BoundFactory } from "../queue/bounded_metrics.ts";
import { REFUSED_LIMIT } from "./controller.ts";
import type { DeleteMetrics } from "./ports.ts";

/** controller_persistentvolume_delete_* with upstream names, and this agent's refusals. */
export function createDeleteMetrics(
  registry: Registry,
  options: { classExists: (name: string) => boolean; bounds?: BoundFactory | undefined },
): DeleteMetrics {
  const label = (name: string) => ({ class: classLabel(name, options.classExists) });
  const total = new Counter({
    name: "controller_persistentvolume_delete_total",
    help:
      "Total number of persistent volumes deleted succesfully. Broken down by storage class name.",
    labelNames: ["class"],
    registers: [registry],
  });
  const failed = new Counter({
    name: "controller_persistentvolume_delete_failed_total",
    help:
      "Total number of persistent volume delete failed attempts. Broken down by storage class name.",
    labelNames: ["class"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "controller_persistentvolume_delete_duration_seconds",
    help:
      "Latency in seconds to delete persistent volumes. Failed deletion attempts are ignored. Broken down by storage class name.",
    labelNames: ["class"],
    registers: [registry],
  });
  const refused = new Counter({
    name: "csi_node_provisioner_persistentvolume_delete_refused_total",
    help:
      "Released PersistentVolumes this agent refused to delete, by reason (no-node-affinity: the PV does not say which node holds its volume).",
    labelNames: ["reason"],
    registers: [registry],
  });
  return {
    deleted: (storageClass, seconds) => {
      total.inc(label(storageClass));
      duration.observe(label(storageClass), seconds);
    },
    failed: (storageClass) => failed.inc(label(storageClass)),
    refused: (reason) => refused.inc({ reason }),
    ...(options.bounds ? { refusedSet: options.bounds("refused_volumes", REFUSED_LIMIT) } : {}),
  };
}
