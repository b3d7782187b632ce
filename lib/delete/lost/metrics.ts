/**
 * The metrics of lost volumes: what was done with them, the nodes the Lease
 * watchers see gone, and this node's volumes its driver no longer has.
 */
import { Counter, Gauge, type Registry } from "prom-client";

/** What the release reports. */
export interface LostMetrics {
  volumes(action: "released" | "claim_deleted" | "reported", count?: number): void;
  lostNodes(count: number): void;
  missingOnDriver(count: number): void;
}

/** Registers the families in `registry`. */
export function createLostMetrics(registry: Registry): LostMetrics {
  const volumes = new Counter({
    name: "csi_node_provisioner_lost_node_volumes_total",
    help:
      "Volumes of a lost node (its Node object deleted for --node-loss-release-after) or missing on the driver, by what this agent did: released (Released PV deleted without DeleteVolume), claim_deleted (claim of a Bound PV deleted, as its StorageClass opts in), reported (a Warning Event only).",
    labelNames: ["action"] as const,
    registers: [registry],
  });
  const lost = new Gauge({
    name: "csi_node_provisioner_lost_nodes",
    help:
      "Nodes whose agent's Lease expired and whose Node object is deleted, as the agents that watch the Leases see them (the others report 0).",
    registers: [registry],
  });
  const missing = new Gauge({
    name: "csi_node_provisioner_volumes_missing_on_driver",
    help:
      "This node's PVs whose volume the CSI driver no longer has (ListVolumes or ControllerGetVolume at the agent's start); each also has a Warning Event VolumeMissingOnDriver.",
    registers: [registry],
  });
  for (const action of ["released", "claim_deleted", "reported"]) volumes.inc({ action }, 0);
  return {
    volumes: (action, count = 1) => volumes.inc({ action }, count),
    lostNodes: (count) => lost.set(count),
    missingOnDriver: (count) => missing.set(count),
  };
}
