/**
 * PV node affinity in both directions: generated from a CreateVolume
 * response's accessible_topology (`GenerateVolumeNodeAffinity`), and checked
 * against this node's segment to decide whether a volume is ours to delete
 * (`VolumeIsAccessible`, upstream topology.go).
 */
import type { Segments, Topology } from "../csi/types.ts";
import type {
  NodeSelectorTerm,
  PersistentVolume,
  SelectorRequirement,
  VolumeNodeAffinity,
} from "../model/objects.ts";
import { isValidLabel, matchNodeSelectorTerms } from "./node_selector.ts";

/**
 * One node selector term per topology with segments, each segment an `In`
 * expression with its single value; undefined when there is none.
 *
 * Differences from upstream, both to produce valid and stable objects:
 * expressions are sorted by key (upstream follows Go map order), and when
 * every topology is empty we return no affinity, where upstream returns a
 * `required` with no terms that the API server rejects.
 */
export function volumeNodeAffinity(
  accessibleTopology: readonly Topology[] | null | undefined,
): VolumeNodeAffinity | undefined {
  const terms: NodeSelectorTerm[] = [];
  for (const topology of accessibleTopology ?? []) {
    const keys = Object.keys(topology.segments ?? {}).sort();
    if (keys.length === 0) continue;
    terms.push({
      matchExpressions: keys.map((key) => ({
        key,
        operator: "In",
        values: [topology.segments[key] ?? ""],
      })),
    });
  }
  return terms.length === 0 ? undefined : { required: { nodeSelectorTerms: terms } };
}

/** Whether a PV is this node's, as far as its node affinity tells. */
type Accessibility =
  /** The affinity matches this node's segment: the volume lives here. */
  | { kind: "accessible" }
  /** The affinity excludes this node: another agent's volume (upstream: "PV was not provisioned on this node"). */
  | { kind: "notAccessible" }
  /**
   * The PV has no node affinity (or no required terms). Upstream treats such
   * a PV as accessible everywhere, so every agent deletes it through its own
   * driver, and the volume is deleted on whichever node answers first. We do
   * not: the caller should skip it and emit
   * a Warning instead.
   */
  | { kind: "noAffinity" }
  /** The driver reported no topology for this node, so nothing can be decided. */
  | { kind: "noNodeTopology" }
  /** The affinity cannot be evaluated (bad operator, key or value). */
  | { kind: "error"; message: string };

/**
 * Evaluates the PV's required node affinity against this node's segment,
 * as Kubernetes would against a Node labelled with exactly the segment.
 */
export function volumeIsAccessible(
  nodeAffinity: VolumeNodeAffinity | undefined,
  segment: Segments | null,
): Accessibility {
  if (segment === null) return { kind: "noNodeTopology" };
  const terms = nodeAffinity?.required?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return { kind: "noAffinity" };
  const result = matchNodeSelectorTerms(terms, segment);
  if (!result.ok) {
    return { kind: "error", message: `checking volume affinity failed: ${result.error}` };
  }
  return result.matches ? { kind: "accessible" } : { kind: "notAccessible" };
}

/**
 * volumeIsAccessible() for one segment, answering the affinity this agent's
 * own PVs carry without evaluating it: a term whose every expression is
 * `key In [the segment's value]`, for a segment label that is itself valid,
 * is a valid term that matches, so the volume is accessible whatever the
 * other terms say (matchNodeSelectorTerms returns at the first valid match).
 * The informer asks this of every PV event; the full evaluation validates
 * each key and value with regular expressions. Anything else is evaluated
 * in full, with the same answer.
 */
export function accessibilityOn(
  segment: Segments | null,
): (nodeAffinity: VolumeNodeAffinity | undefined) => Accessibility {
  const validLabels = new Map(
    Object.entries(segment ?? {}).filter(([key, value]) => isValidLabel(key, value)),
  );
  return (nodeAffinity) => {
    const terms = nodeAffinity?.required?.nodeSelectorTerms ?? [];
    if (terms.some((term) => namesOnlySegmentLabels(term, validLabels))) return ACCESSIBLE;
    return volumeIsAccessible(nodeAffinity, segment);
  };
}

const ACCESSIBLE: Accessibility = Object.freeze({ kind: "accessible" });

function namesOnlySegmentLabels(
  term: NodeSelectorTerm,
  validLabels: ReadonlyMap<string, string>,
): boolean {
  const expressions = term.matchExpressions ?? [];
  if (expressions.length === 0 || (term.matchFields?.length ?? 0) > 0) return false;
  return expressions.every((requirement) => {
    const value = soleInValue(requirement);
    return value !== undefined && validLabels.get(requirement.key) === value;
  });
}

/** The one value of a `key In [value]` requirement; undefined for any other requirement. */
function soleInValue(requirement: SelectorRequirement): string | undefined {
  return requirement.operator === "In" && requirement.values?.length === 1
    ? requirement.values[0]
    : undefined;
}

/**
 * Whether the affinity confines the volume to the node named `nodeName`:
 * every term requires, with that one value, a topology key whose value in
 * this node's segment is the node's name. Node-local drivers name the node
 * in such a key (csi-driver-host-path's topology.hostpath.csi/node,
 * TopoLVM's topology.topolvm.io/node), and node names are unique, so no
 * other node's segment matches the term. A volume of a zone, of several
 * nodes, or without affinity is not confined.
 */
export function isConfinedToNode(
  nodeAffinity: VolumeNodeAffinity | undefined,
  node: { name: string; segment: Segments | null },
): boolean {
  const terms = nodeAffinity?.required?.nodeSelectorTerms ?? [];
  const { name, segment } = node;
  if (terms.length === 0 || segment === null) return false;
  return terms.every((term) =>
    (term.matchExpressions ?? []).some((requirement) =>
      soleInValue(requirement) === name && segment[requirement.key] === name
    )
  );
}

/**
 * Whether a PV holds this node's volume of its name: it names the driver (and
 * the handle, when the caller knows it) and its node affinity does not place
 * it on another node. Drivers that make volume IDs from the volume name give
 * the same handle to a volume of the same name on every node, so driver and
 * handle alone would take another node's PV for this node's. A PV whose
 * affinity cannot tell (none, one that cannot be evaluated, or a node without
 * a segment) is taken as
 * holding it: deleting a volume a PV may hold would lose data, and the delete
 * path already leaves such PVs to an operator with a Warning.
 */
export function holdsThisNodesVolume(
  pv: PersistentVolume,
  volume: { driverName: string; volumeHandle?: string; segment: Segments | null },
): boolean {
  const csi = pv.spec.csi;
  if (csi?.driver !== volume.driverName) return false;
  if (volume.volumeHandle !== undefined && csi.volumeHandle !== volume.volumeHandle) return false;
  return accessibilityOn(volume.segment)(pv.spec.nodeAffinity).kind !== "notAccessible";
}
