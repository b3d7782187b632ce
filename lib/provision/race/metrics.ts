/**
 * This agent's metrics of the Immediate binding race (upstream has none):
 * how many claims it races for, why it declined claims, and how its
 * selected-node patches ended (conflicts per volume is the race's cost).
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { RaceMetrics } from "./ports.ts";

/** Creates csi_node_provisioner_immediate_binding_* in `registry`. */
export function createRaceMetrics(registry: Registry): RaceMetrics {
  const racing = new Gauge({
    name: "csi_node_provisioner_immediate_binding_races",
    help:
      "Claims of Immediate StorageClasses with no node selected that this agent is racing for (or, outside their allowedTopologies or without their source, keeping track of to report that no node can take them).",
    registers: [registry],
  });
  const declines = new Counter({
    name: "csi_node_provisioner_immediate_binding_declines_total",
    help:
      "Turns of the Immediate binding race in which this node did not try to own the claim, by reason: topology (outside the class's allowedTopologies), source (the claim restores or clones a volume another node holds), published-capacity (its own CSIStorageCapacity is below the request; no GetCapacity), capacity (GetCapacity: too little), capacity-check-failed (GetCapacity timed out or the driver was unavailable).",
    labelNames: ["reason"],
    registers: [registry],
  });
  const attempts = new Counter({
    name: "csi_node_provisioner_immediate_binding_attempts_total",
    help:
      "Patches of volume.kubernetes.io/selected-node by the Immediate binding race, by result: selected (this node owns the claim), conflict (409: the claim changed, usually another node won), gone (the claim was deleted), error.",
    labelNames: ["result"],
    registers: [registry],
  });
  return {
    racing: (count) => racing.set(count),
    declined: (reason) => declines.inc({ reason }),
    attempted: (result) => attempts.inc({ result }),
  };
}
