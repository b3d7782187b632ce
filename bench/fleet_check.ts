/**
 * The fleet scenario's end-of-run check, over the claims and PVs as the API
 * server has them: a fast fleet that lost or doubled a volume would be no
 * result at all. Pure, so that the rule is unit-tested.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from "@kubernetes/client-node";
import { SELECTED_NODE } from "../tests/cluster/workloads.ts";

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
    const node = claim.metadata?.annotations?.[SELECTED_NODE];
    if (node !== undefined) perNode.set(node, (perNode.get(node) ?? 0) + 1);
  }
  const counts = [...perNode.values()];
  return {
    notBoundOnce,
    fewestOnANode: counts.length === 0 ? 0 : Math.min(...counts),
    mostOnANode: counts.length === 0 ? 0 : Math.max(...counts),
  };
}
