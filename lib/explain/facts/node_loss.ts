/**
 * Whether the claim's node, or its agent, is gone: the Node object missing,
 * the agent's Lease expired (its renewTime plus its duration, on explain's
 * clock), since when, and what the agents do about it and when: the
 * capacity withdrawal after --capacity-withdraw-after, the release after
 * --node-loss-release-after as the Lease watchers noted it on the Lease.
 * Also a volume its driver did not have at its agent's start. Pure.
 */
import { parseGoDuration } from "../../config/values.ts";
import { ANN_DELETE_CLAIMS_OF_LOST_NODES } from "../../delete/lost/volumes.ts";
import type { AgentLease } from "../../model/lease.ts";
import type { PersistentVolume, StorageClass } from "../../model/objects.ts";
import { matchNodeSelectorTerms } from "../../topology/node_selector.ts";
import type { EventInfo, NodeInfo } from "../snapshot.ts";
import { ageText } from "../words.ts";

/** What the lines are made of. */
export interface NodeLossInput {
  /** The selected node, or "" (then the volume's). */
  selectedNode: string;
  volume: PersistentVolume | undefined;
  nodes: readonly NodeInfo[];
  /** undefined: not read. */
  leases: readonly AgentLease[] | undefined;
  storageClass: StorageClass | undefined;
  withdrawAfterMs: number;
  claimEvents: readonly EventInfo[];
  now: string;
}

/** The claim's node: selected, or where its volume is (by the Nodes, else by the Leases' segments). */
export function claimNode(input: NodeLossInput): string {
  if (input.selectedNode !== "") return input.selectedNode;
  const terms = input.volume?.spec.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return "";
  const matches = (labels: Record<string, string>) => {
    const result = matchNodeSelectorTerms(terms, labels);
    return result.ok && result.matches;
  };
  const node = input.nodes.find((candidate) => matches(candidate.labels));
  if (node !== undefined) return node.name;
  return input.leases?.find((lease) => lease.segment && matches(lease.segment))?.node ?? "";
}

/** The lines; none when the node and its agent are there and the driver had the volume. */
export function nodeLossLines(input: NodeLossInput): string[] {
  const missing = input.claimEvents.filter((event) => event.reason === "VolumeMissingOnDriver");
  const lines = missing.map((event) =>
    `the driver did not have the volume at its agent's start (Event VolumeMissingOnDriver ${
      ageText(event.time, input.now)
    }): ${event.message}`
  );
  const node = claimNode(input);
  if (node === "") return lines;
  const nodeGone = !input.nodes.some((candidate) => candidate.name === node);
  const lease = input.leases?.find((candidate) => candidate.node === node);
  const expiresMs = lease === undefined
    ? undefined
    : Date.parse(lease.renewTime) + lease.durationMs;
  const leaseExpired = expiresMs !== undefined && expiresMs <= Date.parse(input.now);
  if (nodeGone) lines.push(`Node ${node} does not exist`);
  if (input.leases === undefined) {
    if (nodeGone) lines.push("its agent's Lease could not be read (no permission to list Leases)");
    return lines;
  }
  if (lease === undefined) {
    if (nodeGone) lines.push("its agent has no Lease (Leases are renewed with --enable-capacity)");
    return lines;
  }
  if (leaseExpired) {
    const at = new Date(expiresMs).toISOString();
    lines.push(`its agent's Lease ${lease.name} expired at ${at} (${ageText(at, input.now)})`);
    lines.push(withdrawalLine(expiresMs, input.withdrawAfterMs));
  }
  if (nodeGone) lines.push(...releaseLines(lease, input));
  return lines;
}

function withdrawalLine(expiresMs: number, withdrawAfterMs: number): string {
  if (withdrawAfterMs <= 0) {
    return "its capacity is not withdrawn (--capacity-withdraw-after=0): the scheduler may still send claims there";
  }
  const at = new Date(expiresMs + withdrawAfterMs).toISOString();
  return `its CSIStorageCapacity objects are withdrawn by another agent at ${at} (--capacity-withdraw-after ${
    withdrawAfterMs / 1000
  }s after the Lease expired), and published again when the agent is back`;
}

function releaseLines(lease: AgentLease, input: NodeLossInput): string[] {
  if (lease.nodeGoneSinceMs === undefined) {
    return [
      "the agents that watch the Leases have not noted the Node's deletion yet (they look once its agent's Lease has expired)",
    ];
  }
  const since = new Date(lease.nodeGoneSinceMs).toISOString();
  const lines = [
    `the agents that watch the Leases saw the Node deleted at ${since} (${
      ageText(since, input.now)
    })`,
  ];
  const parsed = parseGoDuration(lease.releaseAfter ?? "0s");
  const afterMs = parsed.ok ? parsed.value : 0;
  if (afterMs <= 0) {
    lines.push(
      "its volumes are not released (--node-loss-release-after=0): delete the claim to provision it again on a live node",
    );
    return lines;
  }
  const at = new Date(lease.nodeGoneSinceMs + afterMs).toISOString();
  const optIn =
    input.storageClass?.metadata.annotations?.[ANN_DELETE_CLAIMS_OF_LOST_NODES] === "true";
  lines.push(
    `at ${at} (--node-loss-release-after ${lease.releaseAfter}) a Released volume of that node is deleted; a Bound one is reported, and its claim is ${
      optIn
        ? "deleted (its class opts in)"
        : `kept (its class has no ${ANN_DELETE_CLAIMS_OF_LOST_NODES}: "true")`
    }`,
  );
  return lines;
}
