/**
 * Helpers of the Immediate binding tests on tests/cluster: an Immediate
 * class of the driver, many claims created at once, the race's metrics
 * summed over the agents, the NotEnoughCapacity Events (with their repeat
 * counts), and a watch of one claim's selected-node annotation.
 */
import { type CoreV1Event, type V1PersistentVolumeClaim, Watch } from "@kubernetes/client-node";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { claimObject } from "../cluster/workloads.ts";
import { ANN_SELECTED_NODE } from "../../lib/model/keys.ts";
import { metricValue } from "./capacity_support.ts";
import { claimEvents, scrape } from "./support.ts";

/** The Event reason of the race's Warnings. */
export const NOT_ENOUGH_CAPACITY = "NotEnoughCapacity";

/** Creates an Immediate class of the driver for one pool, optionally limited to some nodes. */
export async function createImmediateClass(
  cluster: RunningCluster,
  options: { name: string; pool: string; allowedNodes?: string[] },
): Promise<void> {
  await cluster.admin.storage.createStorageClass({
    body: {
      metadata: { name: options.name },
      provisioner: cluster.driverName,
      parameters: { kind: options.pool },
      reclaimPolicy: "Delete",
      volumeBindingMode: "Immediate",
      ...(options.allowedNodes === undefined ? {} : {
        allowedTopologies: [{
          matchLabelExpressions: [{ key: cluster.topologyKey, values: options.allowedNodes }],
        }],
      }),
    },
  });
}

/** Creates `count` claims named `<prefix>-<index>`, 20 requests in flight; resolves to their names. */
export async function createClaims(
  cluster: RunningCluster,
  options: { namespace: string; prefix: string; count: number; storageClass: string; size: string },
): Promise<string[]> {
  const names = Array.from(
    { length: options.count },
    (_, index) => `${options.prefix}-${String(index).padStart(3, "0")}`,
  );
  const queue = [...names];
  const worker = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      await cluster.admin.core.createNamespacedPersistentVolumeClaim({
        namespace: options.namespace,
        body: claimObject(name, options),
      });
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  return names;
}

/** The claims of a namespace by name. */
export async function claimsOf(
  cluster: RunningCluster,
  namespace: string,
): Promise<Map<string, V1PersistentVolumeClaim>> {
  const list = await cluster.admin.core.listNamespacedPersistentVolumeClaim({ namespace });
  return new Map(list.items.map((claim) => [claim.metadata!.name!, claim]));
}

/** A series of the agents' /metrics, summed over the agents (absent counts 0). */
export async function sumOverAgents(agents: Iterable<string>, series: string): Promise<number> {
  let sum = 0;
  for (const url of agents) sum += metricValue(await scrape(url), series) ?? 0;
  return sum;
}

/** The race's selected-node patches of one result, summed over the agents. */
export function attempts(agents: Iterable<string>, result: string): Promise<number> {
  return sumOverAgents(
    agents,
    `csi_node_provisioner_immediate_binding_attempts_total{result="${result}"}`,
  );
}

/** The NotEnoughCapacity Events on a claim. */
export async function capacityWarnings(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
): Promise<CoreV1Event[]> {
  return (await claimEvents(cluster, ref)).filter((event) => event.reason === NOT_ENOUGH_CAPACITY);
}

/** How many times Events were written: each Event's count (a repeat raises it, 1 when unset). */
export function timesWritten(events: CoreV1Event[]): number {
  return events.reduce((sum, event) => sum + (event.count ?? 1), 0);
}

/** What a watch of one claim saw of its selected-node annotation ("" when absent), repeats collapsed. */
export async function watchSelectedNode(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
): Promise<{ history: string[]; stop(): void }> {
  const history: string[] = [];
  const controller = await new Watch(cluster.admin.kubeConfig).watch(
    `/api/v1/namespaces/${ref.namespace}/persistentvolumeclaims`,
    { fieldSelector: `metadata.name=${ref.name}` },
    (_type: string, claim: V1PersistentVolumeClaim) => {
      const node = claim.metadata?.annotations?.[ANN_SELECTED_NODE] ?? "";
      if (history.at(-1) !== node) history.push(node);
    },
    () => {},
  );
  return { history, stop: () => controller.abort() };
}
