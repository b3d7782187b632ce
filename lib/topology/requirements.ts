/**
 * CreateVolumeRequest.accessibility_requirements for this node
 * (`GenerateAccessibilityRequirements` in upstream's topology.go, node mode).
 * The selected node is always our own, and its topology is the segment the
 * driver reported in NodeGetInfo: upstream builds a fake Node and CSINode from
 * it, so the topology keys are exactly the segment's keys and the cluster-wide
 * aggregation yields only this segment. Nothing here looks at Node objects.
 */
import type { Segments, Topology, TopologyRequirement } from "../csi/types.ts";
import type { TopologySelectorTerm } from "../model/objects.ts";

/** One topology as sorted [key, value] pairs (upstream's topologyTerm). */
type TopologyTerm = [key: string, value: string][];

/** What the requirements depend on. */
interface RequirementsInput {
  /** NodeGetInfo accessible_topology.segments; null when the driver reported none. */
  segment: Segments | null;
  /** This node's name (NODE_NAME), for error messages. */
  nodeName: string;
  /** StorageClass.allowedTopologies. */
  allowedTopologies: readonly TopologySelectorTerm[] | undefined;
}

/** The requirement (null: send none), or upstream's error text. */
type RequirementsResult =
  | { ok: true; value: TopologyRequirement | null }
  | { ok: false; error: string };

/**
 * The four cases of upstream's GenerateAccessibilityRequirements
 * (pkg/controller/topology.go) with a fixed node topology: strict or not, with or without
 * allowedTopologies. Strict: only our segment, and only if some allowed term
 * is a subset of it. Non-strict: the flattened allowed terms (or our segment
 * when there are none), with `preferred` rotated to start at the first term
 * our segment satisfies.
 */
export function accessibilityRequirements(
  input: RequirementsInput,
  options: { strictTopology: boolean },
): RequirementsResult {
  const selected = termOf(input.segment ?? {});
  if (selected.length === 0) {
    return { ok: false, error: `no topology key found for node ${input.nodeName}` };
  }
  const allowed = input.allowedTopologies ?? [];
  let requisite: TopologyTerm[];
  if (options.strictTopology) {
    const flat = flattenAllowedTopologies(allowed);
    if (allowed.length > 0 && !flat.some((term) => isSubset(term, selected))) {
      return {
        ok: false,
        error:
          `selected node '${JSON.stringify(input.nodeName)}' topology '${formatTerm(selected)}' ` +
          `is not in allowed topologies: ${formatTerms(flat)}`,
      };
    }
    requisite = [selected];
  } else {
    requisite = allowed.length > 0 ? flattenAllowedTopologies(allowed) : [selected];
  }
  // allowedTopologies made only of empty terms: upstream falls back to "no topology".
  if (requisite.length === 0) return { ok: true, value: null };
  requisite = sortAndDeduplicate(requisite);
  if (options.strictTopology) {
    return { ok: true, value: { requisite: toCsi(requisite), preferred: toCsi(requisite) } };
  }
  const first = requisite.findIndex((term) => isSubset(term, selected));
  if (first === -1) {
    return {
      ok: false,
      error:
        `topology ${formatTerm(selected)} from selected node ${JSON.stringify(input.nodeName)} ` +
        `is not in requisite: ${formatTerms(requisite)}`,
    };
  }
  const preferred = [...requisite.slice(first), ...requisite.slice(0, first)];
  return { ok: true, value: { requisite: toCsi(requisite), preferred: toCsi(preferred) } };
}

/**
 * Distributes the OR of values over the AND of expressions: a term
 * {zone: [a, b], rack: [r]} becomes {zone=a, rack=r} OR {zone=b, rack=r}; the
 * terms of all selector terms are OR'ed. Ported literally, including that a
 * term without expressions contributes nothing.
 */
export function flattenAllowedTopologies(
  allowedTopologies: readonly TopologySelectorTerm[],
): TopologyTerm[] {
  const result: TopologyTerm[] = [];
  for (const selectorTerm of allowedTopologies) {
    let terms: TopologyTerm[] = [];
    for (const expression of selectorTerm.matchLabelExpressions ?? []) {
      const next: TopologyTerm[] = [];
      for (const value of expression.values) {
        if (terms.length === 0) next.push([[expression.key, value]]);
        else for (const term of terms) next.push([...term, [expression.key, value]]);
      }
      terms = next;
    }
    result.push(...terms);
  }
  return result.map(sortTerm);
}

/** A segment map as a sorted term. */
export function termOf(segment: Segments): TopologyTerm {
  return sortTerm(Object.entries(segment));
}

function sortTerm(term: TopologyTerm): TopologyTerm {
  return [...term].sort(([keyA, valueA], [keyB, valueB]) =>
    compareStrings(keyA, keyB) || compareStrings(valueA, valueB)
  );
}

/** Upstream's topologyTerm.compare: shorter first, then pair by pair. */
function compareTerms(a: TopologyTerm, b: TopologyTerm): number {
  if (a.length !== b.length) return a.length - b.length;
  for (let index = 0; index < a.length; index++) {
    const [keyA, valueA] = a[index] ?? ["", ""];
    const [keyB, valueB] = b[index] ?? ["", ""];
    const order = compareStrings(keyA, keyB) || compareStrings(valueA, valueB);
    if (order !== 0) return order;
  }
  return 0;
}

function sortAndDeduplicate(terms: TopologyTerm[]): TopologyTerm[] {
  const sorted = [...terms].sort(compareTerms);
  return sorted.filter((term, index) =>
    index === 0 || compareTerms(sorted[index - 1] ?? [], term) !== 0
  );
}

/** Upstream's topologyTerm.subset: every pair of `term` is in `other` (both sorted). */
export function isSubset(term: TopologyTerm, other: TopologyTerm): boolean {
  if (term.length === 0) return true;
  let matched = 0;
  for (const [key, value] of other) {
    const [wantedKey, wantedValue] = term[matched] ?? ["", ""];
    if (wantedKey !== key) continue;
    if (wantedValue !== value) return false;
    if (++matched === term.length) return true;
  }
  return false;
}

function toCsi(terms: TopologyTerm[]): Topology[] {
  return terms.filter((term) => term.length > 0).map((term) => ({
    segments: Object.fromEntries(term),
  }));
}

/** Go's %v of a topologyTerm: `[{key value} {key2 value2}]`. */
export function formatTerm(term: TopologyTerm): string {
  return `[${term.map(([key, value]) => `{${key} ${value}}`).join(" ")}]`;
}

function formatTerms(terms: TopologyTerm[]): string {
  return `[${terms.map(formatTerm).join(" ")}]`;
}

/** Byte-wise order, like Go's strings.Compare for the ASCII keys topology uses. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
