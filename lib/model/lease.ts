/**
 * The Lease (coordination.k8s.io/v1) each agent renews in its namespace so
 * that the other agents of its driver can see it is alive: its name, its
 * labels, and the trimmed shape the agents keep of each other's.
 */
import { fnv32a, nameWithMaxLength, nodeLabels } from "./labels.ts";

/** How often an agent renews its Lease: at most one write per agent per this. */
export const LEASE_RENEW_MS = 30_000;
/** spec.leaseDurationSeconds: two renewals, so that one lost write does not make an agent look gone. */
export const LEASE_DURATION_SECONDS = 60;
/** How many agents watch the Leases, and may act for a gone agent. */
export const LIVENESS_WATCHERS = 3;
/** The rendezvous key that ranks the agents for watching. */
export const WATCHERS_KEY = "csi-node-provisioner/liveness-watchers";
/** The longest object name (a DNS subdomain). */
const NAME_MAX_LENGTH = 253;

/** A Lease of an agent, as the others keep it. */
export interface AgentLease {
  name: string;
  resourceVersion: string;
  /** spec.holderIdentity: the agent's node. */
  node: string;
  /** The csi.storage.k8s.io/managed-by label, the same as on its CSIStorageCapacity objects. */
  publisher: string;
  /** spec.renewTime as written (MicroTime); compared only for change, never against this clock. */
  renewTime: string;
  durationMs: number;
}

/**
 * `csi-node-provisioner-<hash of the driver>-<node>`: one per driver and
 * node, so that two drivers' agents in one namespace never share a Lease.
 */
export function leaseName(driverName: string, nodeName: string): string {
  return nameWithMaxLength(`csi-node-provisioner-${fnv32a(driverName)}`, nodeName, NAME_MAX_LENGTH);
}

/** The Lease's labels: the driver's (the agents' selector) and the node's managed-by value. */
export function leaseLabels(driverName: string, nodeName: string): Record<string, string> {
  return nodeLabels(driverName, nodeName);
}

/** MicroTime as the API server writes it: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
