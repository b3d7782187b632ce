/**
 * The withdrawal's metrics: what this agent withdrew, and which nodes it
 * sees with capacity objects but no live agent. Each of the agents that
 * watch the Leases reports the same nodes, so that the alert needs no
 * particular agent to be up.
 */
import { Counter, Gauge, type Registry } from "prom-client";

/** What the withdrawal reports. */
export interface WithdrawMetrics {
  withdrawn(objects: number): void;
  /** Replaces the series: objects by node, for the nodes without a live agent. */
  unattended(objectsByNode: ReadonlyMap<string, number>): void;
}

/** Registers the families in `registry`. */
export function createWithdrawMetrics(registry: Registry): WithdrawMetrics {
  const withdrawn = new Counter({
    name: "csi_node_provisioner_capacity_withdrawn_total",
    help:
      "CSIStorageCapacity objects of other nodes this agent deleted because their node's agent was gone for --capacity-withdraw-after. Each withdrawal is also a Warning Event CapacityWithdrawn on the node (or the object).",
    registers: [registry],
  });
  const unattended = new Gauge({
    name: "csi_node_provisioner_capacity_without_live_agent",
    help:
      "CSIStorageCapacity objects of the driver, by the node they publish for (agent_node), whose agent is not alive (its Lease expired or missing), as the three agents that watch the Leases see them (the others report none): the scheduler may still send claims there.",
    labelNames: ["agent_node"] as const,
    registers: [registry],
  });
  return {
    withdrawn: (objects) => withdrawn.inc(objects),
    unattended: (byNode) => {
      unattended.reset();
      for (const [node, objects] of byNode) unattended.set({ agent_node: node }, objects);
    },
  };
}
