/** Where a bound claim's volume lives: its PV's node affinity against the nodes. */
import type { NodeSelectorTerm, PersistentVolume } from "../model/objects.ts";
import { matchNodeSelectorTerms } from "../topology/node_selector.ts";
import type { NodeInfo } from "./snapshot.ts";

/** The nodes the PV's required node affinity selects, by name. */
export function volumeNodes(volume: PersistentVolume, nodes: readonly NodeInfo[]): string[] {
  const terms = volume.spec.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  return nodes.filter((node) => {
    const match = matchNodeSelectorTerms(terms, node.labels);
    return match.ok && match.matches;
  }).map((node) => node.name).sort();
}

/** "topology.hostpath.csi/node In [node-a]" per term, terms joined by " or ". */
export function affinityText(volume: PersistentVolume): string {
  const terms = volume.spec.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return "none";
  return terms.map(termText).join(" or ");
}

function termText(term: NodeSelectorTerm): string {
  const parts = [...(term.matchExpressions ?? []), ...(term.matchFields ?? [])].map((r) =>
    `${r.key} ${r.operator}${r.values?.length ? ` [${r.values.join(", ")}]` : ""}`
  );
  return parts.join(" and ") || "(empty term)";
}
