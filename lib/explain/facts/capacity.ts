/**
 * Every node's published capacity for the claim's class against its request
 * (the CSIStorageCapacity objects kube-scheduler reads): which node each
 * object describes, whether the request fits, largest first.
 */
import { DRIVER_NAME_LABEL } from "../../model/keys.ts";
import type { LabelSelector } from "../../model/objects.ts";
import { parseQuantity } from "../../model/quantity.ts";
import type { StorageCapacity } from "../../model/storage_capacity.ts";
import { matchNodeSelectorTerms } from "../../topology/node_selector.ts";
import type { NodeInfo } from "../snapshot.ts";

/** One object's figures. */
export interface NodeCapacity {
  /** The nodes its nodeTopology selects, by name; usually one. */
  nodes: string[];
  /** The topology it was published for, as `key=value` (for objects that select no node). */
  topology: string;
  capacityBytes: bigint;
  maximumVolumeBytes: bigint | undefined;
  /** capacity ≥ request and maximumVolumeSize (if any) ≥ request, as the scheduler checks. */
  fits: boolean;
}

/** The class's objects of the driver, largest capacity first, then by node name. */
export function nodeCapacities(
  objects: readonly StorageCapacity[],
  context: { driverName: string; nodes: readonly NodeInfo[]; requestBytes: bigint | undefined },
): NodeCapacity[] {
  const ofDriver = objects.filter((object) => {
    const driver = object.metadata.labels?.[DRIVER_NAME_LABEL];
    return driver === undefined || driver === context.driverName;
  });
  const rows = ofDriver.map((object): NodeCapacity => {
    const capacityBytes = bytes(object.capacity) ?? 0n;
    const maximumVolumeBytes = bytes(object.maximumVolumeSize);
    const request = context.requestBytes;
    return {
      nodes: selectedNodes(object.nodeTopology, context.nodes),
      topology: topologyText(object.nodeTopology),
      capacityBytes,
      maximumVolumeBytes,
      fits: request !== undefined && capacityBytes >= request &&
        (maximumVolumeBytes === undefined || maximumVolumeBytes >= request),
    };
  });
  return rows.sort((a, b) =>
    a.capacityBytes === b.capacityBytes
      ? nodeLabel(a).localeCompare(nodeLabel(b))
      : (a.capacityBytes > b.capacityBytes ? -1 : 1)
  );
}

/** The nodes' names, or the topology when it selects none. */
export function nodeLabel(row: NodeCapacity): string {
  return row.nodes.length > 0 ? row.nodes.join(",") : `(no node with ${row.topology})`;
}

function bytes(quantity: string | undefined): bigint | undefined {
  if (quantity === undefined) return undefined;
  const parsed = parseQuantity(quantity);
  return parsed.ok ? parsed.value : undefined;
}

/** A label selector as a node selector term (same operators, except that empty selects nothing here). */
function selectedNodes(selector: LabelSelector | undefined, nodes: readonly NodeInfo[]): string[] {
  const expressions = [
    ...Object.entries(selector?.matchLabels ?? {}).map(([key, value]) => ({
      key,
      operator: "In",
      values: [value],
    })),
    ...(selector?.matchExpressions ?? []),
  ];
  if (expressions.length === 0) return [];
  return nodes.filter((node) => {
    const match = matchNodeSelectorTerms([{ matchExpressions: expressions }], node.labels);
    return match.ok && match.matches;
  }).map((node) => node.name).sort();
}

function topologyText(selector: LabelSelector | undefined): string {
  const labels = Object.entries(selector?.matchLabels ?? {}).map(([key, value]) =>
    `${key}=${value}`
  );
  const expressions = (selector?.matchExpressions ?? []).map((expression) =>
    `${expression.key} ${expression.operator} ${(expression.values ?? []).join(",")}`.trim()
  );
  const all = [...labels, ...expressions];
  return all.length === 0 ? "no topology" : all.join(", ");
}
