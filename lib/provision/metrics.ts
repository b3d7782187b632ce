/**
 * The controller_persistentvolumeclaim_provision_* metrics of
 * sig-storage-lib-external-provisioner, with the same names, labels and help
 * texts. Unlike upstream, failures count only claims this node actually tried
 * (an ignored claim is not a failure), and the labels are bounded: a class
 * that does not exist and a data source kind the agent does not provision
 * from are "other" (model/metric_labels.ts).
 */
import { Counter, Histogram, type Registry } from "prom-client";
import { classLabel, sourceLabel } from "../model/metric_labels.ts";
import type { BoundFactory } from "../queue/bounded_metrics.ts";
import type { ProvisionLabels, ProvisionMetrics } from "./ports.ts";
import { SLOW_SET_LIMIT } from "./slow_set.ts";
import { SOURCE_MISSES_LIMIT } from "./source/misses.ts";

/** Creates the provisioning metrics in `registry`. */
export function createProvisionMetrics(
  registry: Registry,
  options: { classExists: (name: string) => boolean; bounds?: BoundFactory | undefined },
): ProvisionMetrics {
  const { bounds } = options;
  const bounded = (labels: ProvisionLabels) => ({
    class: classLabel(labels.class, options.classExists),
    source: sourceLabel(labels.source),
  });
  const labelNames = ["class", "source"] as const;
  const total = new Counter({
    name: "controller_persistentvolumeclaim_provision_total",
    help:
      "Total number of persistent volumes provisioned succesfully. Broken down by storage class name and source of the claim.",
    labelNames,
    registers: [registry],
  });
  const failed = new Counter({
    name: "controller_persistentvolumeclaim_provision_failed_total",
    help:
      "Total number of persistent volume provision failed attempts. Broken down by storage class name and source of the claim.",
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "controller_persistentvolumeclaim_provision_duration_seconds",
    help:
      "Latency in seconds to provision persistent volumes. Failed provisioning attempts are ignored. Broken down by storage class name and source of the claim.",
    labelNames,
    registers: [registry],
  });
  return {
    succeeded: (labels: ProvisionLabels, seconds: number) => {
      total.inc(bounded(labels));
      duration.observe(bounded(labels), seconds);
    },
    failed: (labels: ProvisionLabels) => failed.inc(bounded(labels)),
    ...(bounds
      ? {
        slowSet: bounds("infeasible_claims", SLOW_SET_LIMIT),
        sourceMisses: bounds("misplaced_source_claims", SOURCE_MISSES_LIMIT),
      }
      : {}),
  };
}
