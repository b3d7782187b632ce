/** Where a bound claim's volume lives: its PV's node affinity against the nodes. */
import type { NodeSelectorTerm, PersistentVolume } from "../../model/objects.ts";
import { parseQuantity } from "../../model/quantity.ts";
import { matchNodeSelectorTerms } from "../../topology/node_selector.ts";
import type { NodeInfo } from "../snapshot.ts";
import { sizeText } from "../words.ts";

/**
 * A PV that names the claim in its claimRef while the claim names no volume:
 * whether the PV controller can bind it (its FindMatchingVolume takes a
 * pre-bound volume only when it is large enough; the class must match too).
 */
export function madeForText(
  volume: PersistentVolume,
  claim: { requestBytes: bigint | undefined; className: string },
): string {
  const name = volume.metadata.name;
  const parsed = parseQuantity(volume.spec.capacity?.storage ?? "");
  const request = claim.requestBytes;
  if (parsed.ok && request !== undefined && parsed.value < request) {
    return `volume ${name} names the claim but holds ${sizeText(parsed.value)}, less than the ${
      sizeText(request)
    } requested: the PV controller will not bind it`;
  }
  const volumeClass = volume.spec.storageClassName ?? "";
  if (volumeClass !== claim.className) {
    return `volume ${name} names the claim but has class ${JSON.stringify(volumeClass)}, not ${
      JSON.stringify(claim.className)
    }: the PV controller will not bind it`;
  }
  return `volume ${name} was made for it (phase ${
    volume.status?.phase ?? "unknown"
  }); waiting for the PV controller to bind it`;
}

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
