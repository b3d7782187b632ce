/**
 * The demo's story: three nodes whose local pools differ in size, one agent
 * per node, a WaitForFirstConsumer class, and pods whose claims fit some
 * nodes and not others. Pods are created one at a time, each waited for
 * (bound, or refused by the scheduler) and the published capacity with it,
 * so that what is shown is what the scheduler saw.
 */

import type { V1Pod } from "@kubernetes/client-node";
import { formatBinarySI, parseQuantity } from "../../lib/model/quantity.ts";
import { HOSTPATH_DRIVER_NAME, HOSTPATH_TOPOLOGY_KEY } from "../cluster/hostpath.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { capacitiesByNode, createClaimAndPod, waitForClaimBound } from "../cluster/workloads.ts";

export const DEMO_NAMESPACE = "demo";
export const DEMO_CLASS = "demo-local";
/** The driver pool the class selects (StorageClass parameter `kind`). */
export const DEMO_POOL = "fast";

/** Node name → size of its pool. */
export const DEMO_NODES: ReadonlyArray<{ name: string; pool: string }> = [
  { name: "node-a", pool: "2Gi" },
  { name: "node-b", pool: "5Gi" },
  { name: "node-c", pool: "10Gi" },
];

/** In creation order; `db` fits only node-c, `archive` fits no node. */
export const DEMO_WORKLOADS: ReadonlyArray<{ name: string; size: string; note: string }> = [
  { name: "db", size: "6Gi", note: "fits only node-c" },
  { name: "logs", size: "3Gi", note: "fits node-b or node-c" },
  { name: "web", size: "1Gi", note: "fits anywhere" },
  { name: "cache", size: "1Gi", note: "fits anywhere" },
  { name: "archive", size: "20Gi", note: "fits no node" },
];

/** What happened to one workload. */
export interface Placement {
  name: string;
  size: string;
  node: string | undefined;
  pv: string | undefined;
  status: string;
  /** Why the scheduler placed the pod nowhere. */
  schedulerSays?: string;
}

export function storageClassManifest(): Record<string, unknown> {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: DEMO_CLASS },
    provisioner: HOSTPATH_DRIVER_NAME,
    parameters: { kind: DEMO_POOL },
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
  };
}

/** Published capacity of the demo class, in bytes, by node. */
export async function publishedCapacity(cluster: RunningCluster): Promise<Map<string, number>> {
  const byNode = await capacitiesByNode(cluster.admin, {
    namespace: cluster.agentNamespace,
    topologyKey: HOSTPATH_TOPOLOGY_KEY,
    storageClass: DEMO_CLASS,
  });
  const bytes = new Map<string, number>();
  for (const [node, object] of byNode) {
    bytes.set(node, bytesOf(String(object.capacity ?? "0")));
  }
  return bytes;
}

/** Waits until every node publishes its pool minus what it holds. */
export async function waitForCapacity(
  cluster: RunningCluster,
  placements: Placement[],
): Promise<Map<string, number>> {
  const expected = new Map(DEMO_NODES.map((node) => [node.name, bytesOf(node.pool)]));
  for (const placement of placements) {
    if (placement.node === undefined) continue;
    expected.set(placement.node, expected.get(placement.node)! - bytesOf(placement.size));
  }
  return await waitFor(async () => {
    const published = await publishedCapacity(cluster);
    const matches = [...expected].every(([node, value]) => published.get(node) === value);
    return matches ? published : undefined;
  }, { description: "the published capacity of every node", timeoutMs: 60_000 });
}

export function bytesOf(quantity: string): number {
  const parsed = parseQuantity(quantity);
  if (!parsed.ok) throw new Error(`bad quantity ${quantity}: ${parsed.error}`);
  return Number(parsed.value);
}

/** 6442450944 → "6Gi", as Kubernetes prints quantities. */
export function quantityOf(bytes: number): string {
  return formatBinarySI(BigInt(bytes));
}

/** Creates the claim and its pod, and waits for the claim to bind or the scheduler to give up. */
export async function place(
  cluster: RunningCluster,
  workload: { name: string; size: string },
): Promise<Placement> {
  const ref = { namespace: DEMO_NAMESPACE, name: workload.name };
  await createClaimAndPod(cluster.admin, DEMO_NAMESPACE, { ...workload, storageClass: DEMO_CLASS });
  const outcome = await waitFor(async () => {
    const pod = await cluster.admin.core.readNamespacedPod(ref);
    if (unschedulable(pod)) return { refused: pod };
    const claim = await cluster.admin.core.readNamespacedPersistentVolumeClaim(ref);
    return claim.status?.phase === "Bound" ? { bound: pod } : undefined;
  }, { description: `${workload.name}: bound or refused by the scheduler`, timeoutMs: 60_000 });
  if ("refused" in outcome) {
    return {
      ...workload,
      node: undefined,
      pv: undefined,
      status: "Pending",
      schedulerSays: reason(outcome.refused),
    };
  }
  const claim = await waitForClaimBound(cluster.admin, ref);
  const pod = await waitFor(async () => {
    const current = await cluster.admin.core.readNamespacedPod(ref);
    return current.spec?.nodeName ? current : undefined;
  }, { description: `${workload.name}: pod bound to its node` });
  return { ...workload, node: pod.spec!.nodeName!, pv: claim.spec!.volumeName!, status: "Bound" };
}

function scheduledCondition(pod: V1Pod) {
  return pod.status?.conditions?.find((condition) => condition.type === "PodScheduled");
}

function unschedulable(pod: V1Pod): boolean {
  const condition = scheduledCondition(pod);
  return condition?.status === "False" && condition.reason === "Unschedulable";
}

/** The scheduler's first sentence, e.g. "0/3 nodes are available: 3 node(s) did not have enough free storage." */
function reason(pod: V1Pod): string {
  const message = scheduledCondition(pod)?.message ?? "unschedulable";
  return `${message.split(". ")[0]!.replace(/\.$/, "")}.`;
}
