/** The demo's tables: capacity per node, and where each pod and its claim ended up. */

import { DEMO_NODES, type Placement, quantityOf } from "./scenario.ts";
import { renderTable } from "./table.ts";

export function capacityTable(
  before: Map<string, number>,
  after?: { published: Map<string, number>; placements: Placement[] },
): string {
  const rows = DEMO_NODES.map((node) => {
    const cells = [node.name, node.pool, quantityOf(before.get(node.name) ?? 0)];
    if (after === undefined) return cells;
    const held = after.placements.filter((placement) => placement.node === node.name)
      .map((placement) => `${placement.name} ${placement.size}`);
    return [...cells, quantityOf(after.published.get(node.name) ?? 0), held.join(", ") || "-"];
  });
  const columns = [
    { header: "node" },
    { header: "pool size", align: "right" as const },
    { header: after ? "published before" : "published capacity", align: "right" as const },
    ...(after
      ? [{ header: "published after", align: "right" as const }, { header: "volumes on it" }]
      : []),
  ];
  return renderTable(columns, rows);
}

export function placementTable(placements: Placement[]): string {
  const table = renderTable(
    [
      { header: "pod / claim" },
      { header: "size", align: "right" },
      { header: "node" },
      { header: "PersistentVolume" },
      { header: "claim status" },
    ],
    placements.map((placement) => [
      placement.name,
      placement.size,
      placement.node ?? "-",
      placement.pv ?? "-",
      placement.status,
    ]),
  );
  const refusals = placements.filter((placement) => placement.schedulerSays).map((placement) =>
    `  ${placement.name} stays Pending: no node published ${placement.size} of free capacity, ` +
    `so kube-scheduler says\n    "${placement.schedulerSays}"`
  );
  return [table, "", ...refusals].join("\n");
}

/** What to type next, with the built kubectl. */
export function usageHints(options: { kubectl: string; kubeconfig: string; logs: string }): string {
  return [
    `Everything keeps running. Kubeconfig: ${options.kubeconfig}`,
    "",
    `  export KUBECONFIG=${options.kubeconfig}`,
    `  alias kubectl=${options.kubectl}`,
    "  kubectl get pods,pvc -n demo -o wide",
    "  kubectl get pv -o custom-columns=PV:.metadata.name,CLAIM:.spec.claimRef.name,\\",
    "SIZE:.spec.capacity.storage,NODE:.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]",
    "  kubectl get csistoragecapacities -n csi-node-provisioner \\",
    "    -o custom-columns=CLASS:.storageClassName,NODE:.nodeTopology.matchLabels.*,CAPACITY:.capacity",
    "  kubectl describe pod -n demo archive      # why it is Pending",
    "",
    `Agent and driver logs: ${options.logs}/agent-node-*.log, ${options.logs}/csi-driver-node-*.log`,
    "Press Ctrl-C to stop everything.",
  ].join("\n");
}
