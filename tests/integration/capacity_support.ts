/**
 * Helpers of the capacity tests on tests/cluster: agents started with the
 * capacity flags and upstream's RBAC, the CSIStorageCapacity objects of each
 * node as the API server has them, a watch that timestamps every change as
 * the test process receives it, and metric values from /metrics.
 */
import {
  type V1CSIStorageCapacity,
  type V1PersistentVolume,
  type V1Pod,
  Watch,
} from "@kubernetes/client-node";
import { managedByLabel } from "../../lib/model/labels.ts";
import { parseQuantity } from "../../lib/model/quantity.ts";
import type { AgentRbac } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { waitForClaimBound } from "../cluster/workloads.ts";
import { ANN_SELECTED_NODE, MANAGED_BY_LABEL } from "../../lib/model/keys.ts";
import { startOurAgents } from "./support.ts";

/** The flags of upstream's distributed deployment, with capacity and a short poll. */
export const CAPACITY_ARGS: readonly string[] = [
  "--feature-gates=Topology=true",
  "--enable-capacity",
  "--strict-topology=true",
  "--immediate-topology=false",
  "--worker-threads=5",
  "--retry-interval-start=200ms",
  "--retry-interval-max=2s",
  "-v=4",
];

/**
 * Starts this project's agent on each node with the capacity flags plus
 * `args`, upstream's RBAC by default, and its own metrics port; resolves to
 * the agents' URLs once each is ready (which includes its first publish).
 */
export function startCapacityAgents(
  cluster: RunningCluster,
  options: { args?: string[]; nodes?: string[]; rbac?: AgentRbac; env?: Record<string, string> } =
    {},
): Promise<Map<string, string>> {
  return startOurAgents(cluster, {
    ...options,
    rbac: options.rbac ?? "upstream",
    args: [...CAPACITY_ARGS, ...(options.args ?? [])],
  });
}

/** Every CSIStorageCapacity in the agents' namespace. */
export async function allCapacities(cluster: RunningCluster): Promise<V1CSIStorageCapacity[]> {
  const list = await cluster.admin.storage.listNamespacedCSIStorageCapacity({
    namespace: cluster.agentNamespace,
  });
  return list.items;
}

/** The objects the agent of `node` manages (by its managed-by label), optionally of one class. */
export async function capacitiesOf(
  cluster: RunningCluster,
  node: string,
  storageClass?: string,
): Promise<V1CSIStorageCapacity[]> {
  return (await allCapacities(cluster)).filter((object) =>
    object.metadata?.labels?.[MANAGED_BY_LABEL] === managedByLabel(node) &&
    (storageClass === undefined || object.storageClassName === storageClass)
  );
}

/** Waits until `node` publishes exactly one object for the class with this capacity. */
export async function waitForCapacity(
  cluster: RunningCluster,
  target: { node: string; storageClass: string; bytes: bigint; timeoutMs?: number },
): Promise<V1CSIStorageCapacity> {
  return await waitFor(async () => {
    const objects = await capacitiesOf(cluster, target.node, target.storageClass);
    const [only] = objects;
    return objects.length === 1 && only !== undefined && bytesOf(only.capacity) === target.bytes
      ? only
      : undefined;
  }, {
    description: `${target.node} publishing ${target.bytes} bytes for ${target.storageClass}`,
    timeoutMs: target.timeoutMs ?? 30_000,
  });
}

/** A quantity in bytes (-1 when unreadable). */
export function bytesOf(quantity: string | undefined): bigint {
  const parsed = parseQuantity(quantity ?? "0");
  return parsed.ok ? parsed.value : -1n;
}

/** Identity of an object: what an adopting restart must keep. */
export function identity(object: V1CSIStorageCapacity): string {
  const { name, uid, resourceVersion } = object.metadata ?? {};
  return `${name}/${uid}@${resourceVersion}`;
}

/** One change of a CSIStorageCapacity, as the test received it. */
export interface CapacityEvent {
  type: string;
  /** performance.now() when the event arrived. */
  at: number;
  node: string;
  storageClass: string;
  bytes: bigint;
  name: string;
}

/** A watch of the agents' namespace that keeps every event with its arrival time. */
export async function watchCapacities(
  cluster: RunningCluster,
): Promise<{ events: CapacityEvent[]; stop(): void }> {
  const events: CapacityEvent[] = [];
  const controller = await new Watch(cluster.admin.kubeConfig).watch(
    `/apis/storage.k8s.io/v1/namespaces/${cluster.agentNamespace}/csistoragecapacities`,
    {},
    (type: string, object: V1CSIStorageCapacity) => {
      events.push({
        type,
        at: performance.now(),
        node: object.nodeTopology?.matchLabels?.[cluster.topologyKey] ?? "",
        storageClass: object.storageClassName,
        bytes: bytesOf(object.capacity),
        name: object.metadata?.name ?? "",
      });
    },
    () => {},
  );
  return { events, stop: () => controller.abort() };
}

/** The value of a metric series in /metrics text (labels as written, e.g. `{storageclass="x"}`). */
export function metricValue(text: string, series: string): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/** When each PV was added, by its claim ("namespace/name"), as the test received it. */
export async function watchVolumeAdds(
  cluster: RunningCluster,
): Promise<{ added: Map<string, number>; stop(): void }> {
  const added = new Map<string, number>();
  const controller = await new Watch(cluster.admin.kubeConfig).watch(
    "/api/v1/persistentvolumes",
    {},
    (type: string, pv: V1PersistentVolume) => {
      const claim = pv.spec?.claimRef;
      const key = `${claim?.namespace}/${claim?.name}`;
      if (type === "ADDED" && !added.has(key)) added.set(key, performance.now());
    },
    () => {},
  );
  return { added, stop: () => controller.abort() };
}

/** The node the scheduler selected for the claim (and its pod), once the claim is Bound. */
export async function placedOn(
  cluster: RunningCluster,
  namespace: string,
  name: string,
): Promise<string> {
  const claim = await waitForClaimBound(cluster.admin, { namespace, name });
  return claim.metadata?.annotations?.[ANN_SELECTED_NODE] ?? "";
}

/** The scheduler's own message on a pod it cannot place. */
export async function unschedulableReason(
  cluster: RunningCluster,
  namespace: string,
  name: string,
): Promise<string> {
  return await waitFor(async () => {
    const pod: V1Pod = await cluster.admin.core.readNamespacedPod({ namespace, name });
    const condition = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
    return condition?.status === "False" && condition.reason === "Unschedulable"
      ? condition.message ?? ""
      : undefined;
  }, { description: `pod ${namespace}/${name} Unschedulable`, timeoutMs: 30_000 });
}

/** A CSIStorageCapacity labelled as `labelledFor`'s agent's, for the segment of `topologyOf`. */
export async function createDecoy(
  cluster: RunningCluster,
  storageClass: string,
  options: { labelledFor: string; topologyOf: string },
): Promise<string> {
  const created = await cluster.admin.storage.createNamespacedCSIStorageCapacity({
    namespace: cluster.agentNamespace,
    body: {
      metadata: {
        generateName: "decoy-",
        labels: {
          "csi.storage.k8s.io/drivername": cluster.driverName,
          [MANAGED_BY_LABEL]: managedByLabel(options.labelledFor),
        },
      },
      storageClassName: storageClass,
      nodeTopology: { matchLabels: { [cluster.topologyKey]: options.topologyOf } },
      capacity: "1Ti",
    },
  });
  return created.metadata!.name!;
}
