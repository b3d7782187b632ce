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
/** On an agent's Lease, written by the agent: the JSON of its topology segment. */
export const ANN_LEASE_SEGMENT = "csi-node-provisioner.io/topology-segment";
/**
 * On a gone agent's Lease, written with ANN_NODE_GONE_SINCE by the watcher
 * that acts for it: its --node-loss-release-after as a Go duration ("0s": off).
 */
export const ANN_LEASE_RELEASE_AFTER = "csi-node-provisioner.io/node-loss-release-after";
/**
 * On a gone agent's Lease, written by the watcher that acts for it: when its
 * Node was first seen deleted (RFC 3339), so that another watcher continues
 * the clock instead of starting it again.
 */
export const ANN_NODE_GONE_SINCE = "csi-node-provisioner.io/node-gone-since";
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
  /** ANN_LEASE_SEGMENT, when readable. */
  segment?: Record<string, string>;
  /** ANN_LEASE_RELEASE_AFTER as written. */
  releaseAfter?: string;
  /** ANN_NODE_GONE_SINCE, when readable. */
  nodeGoneSinceMs?: number;
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

/** The notes an agent's Lease carries, from its annotations (unreadable ones left out). */
export function leaseNotes(
  annotations: Record<string, string> | undefined,
): Pick<AgentLease, "segment" | "releaseAfter" | "nodeGoneSinceMs"> {
  const notes: Pick<AgentLease, "segment" | "releaseAfter" | "nodeGoneSinceMs"> = {};
  const segment = parseSegment(annotations?.[ANN_LEASE_SEGMENT]);
  if (segment !== undefined) notes.segment = segment;
  const releaseAfter = annotations?.[ANN_LEASE_RELEASE_AFTER];
  if (releaseAfter !== undefined) notes.releaseAfter = releaseAfter;
  const since = Date.parse(annotations?.[ANN_NODE_GONE_SINCE] ?? "");
  if (Number.isFinite(since)) notes.nodeGoneSinceMs = since;
  return notes;
}

function parseSegment(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const entries = Object.entries(value);
    if (entries.some(([, v]) => typeof v !== "string")) return undefined;
    return Object.fromEntries(entries) as Record<string, string>;
  } catch {
    return undefined;
  }
}

/**
 * The annotations a watcher writes on a gone agent's Lease: the Node gone
 * since `sinceMs`, with its own --node-loss-release-after (in seconds, as
 * a Go duration); undefined removes both.
 */
export function goneSinceNotes(
  sinceMs: number | undefined,
  releaseAfterMs: number,
): Record<string, string | null> {
  if (sinceMs === undefined) {
    return { [ANN_NODE_GONE_SINCE]: null, [ANN_LEASE_RELEASE_AFTER]: null };
  }
  return {
    [ANN_NODE_GONE_SINCE]: new Date(sinceMs).toISOString(),
    [ANN_LEASE_RELEASE_AFTER]: `${Math.round(releaseAfterMs / 1000)}s`,
  };
}
