/**
 * The fleet scenario's end-of-run check, over the claims and PVs as the API
 * server has them: a fast fleet that lost or doubled a volume would be no
 * result at all. Pure, so that the rule is unit-tested.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from "@kubernetes/client-node";
import { ANN_SELECTED_NODE } from "../lib/model/keys.ts";

export interface FleetCheck {
  /** Claims not Bound, or with no PV or more than one PV naming them (claimRef uid): 0 when sound. */
  notBoundOnce: number;
  /** The fewest and the most claims kube-scheduler placed on one node (selected-node). */
  fewestOnANode: number;
  mostOnANode: number;
}

export function checkFleet(
  claims: readonly V1PersistentVolumeClaim[],
  options: { volumes: readonly V1PersistentVolume[]; nodes: readonly string[] },
): FleetCheck {
  const volumesOf = new Map<string, number>();
  for (const volume of options.volumes) {
    const uid = volume.spec?.claimRef?.uid;
    if (uid !== undefined) volumesOf.set(uid, (volumesOf.get(uid) ?? 0) + 1);
  }
  const notBoundOnce =
    claims.filter((claim) =>
      claim.status?.phase !== "Bound" || volumesOf.get(claim.metadata?.uid ?? "") !== 1
    ).length;
  const perNode = new Map(options.nodes.map((node) => [node, 0]));
  for (const claim of claims) {
    const node = claim.metadata?.annotations?.[ANN_SELECTED_NODE];
    if (node !== undefined) perNode.set(node, (perNode.get(node) ?? 0) + 1);
  }
  const counts = [...perNode.values()];
  return {
    notBoundOnce,
    fewestOnANode: counts.length === 0 ? 0 : Math.min(...counts),
    mostOnANode: counts.length === 0 ? 0 : Math.max(...counts),
  };
}

/**
 * What a fleet run that timed out left behind, in one line: the claims not
 * Bound, how many of them kube-scheduler had placed (selected-node) and how
 * many of those already have a PV naming them, by node (the first `examples`
 * nodes with the most), so that the log says whether scheduling, provisioning
 * or binding stopped.
 */
export function describeUnbound(
  claims: readonly V1PersistentVolumeClaim[],
  options: { volumes: readonly V1PersistentVolume[]; examples?: number },
): string {
  const named = new Set(options.volumes.map((volume) => volume.spec?.claimRef?.uid));
  const unbound = claims.filter((claim) => claim.status?.phase !== "Bound");
  const placed = unbound.filter((claim) => claim.metadata?.annotations?.[ANN_SELECTED_NODE]);
  const withVolume = placed.filter((claim) => named.has(claim.metadata?.uid));
  const byNode = new Map<string, string[]>();
  for (const claim of placed) {
    const node = claim.metadata!.annotations![ANN_SELECTED_NODE]!;
    byNode.set(node, [...byNode.get(node) ?? [], claim.metadata?.name ?? "?"]);
  }
  const nodes = [...byNode].sort((a, b) => b[1].length - a[1].length)
    .slice(0, options.examples ?? 5)
    .map(([node, names]) => `${node}: ${names.length} (${names.slice(0, 3).join(", ")})`);
  return `${unbound.length} of ${claims.length} claims not Bound; ${placed.length} of them ` +
    `placed on a node, ${withVolume.length} of those with a PV naming them; by node: ` +
    (nodes.length === 0 ? "none" : nodes.join("; "));
}
