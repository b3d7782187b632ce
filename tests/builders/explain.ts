/**
 * Builders for the explain tests: a snapshot of a small cluster (three nodes
 * with the hostpath topology label, their agents ready, capacity published
 * for class `fast`) around one claim, each part overridable.
 */
import type { ExplainSnapshot, NodeInfo, PodInfo } from "../../lib/explain/snapshot.ts";
import type { StorageCapacity } from "../../lib/model/storage_capacity.ts";
import { claim, DRIVER, storageClass, TOPOLOGY_KEY } from "./provision.ts";

export const NOW = "2026-11-23T12:00:00Z";
export const NODES = ["node-a", "node-b", "node-c"];

/** A node with the driver's topology label. */
export function node(name: string): NodeInfo {
  return { name, labels: { [TOPOLOGY_KEY]: name, "kubernetes.io/hostname": name } };
}

/** A node agent's CSIStorageCapacity for class `fast`. */
export function capacity(
  nodeName: string,
  size: string,
  options: { className?: string; driver?: string; maximumVolumeSize?: string } = {},
): StorageCapacity {
  return {
    metadata: {
      name: `csisc-${nodeName}`,
      namespace: "csi-node-provisioner",
      uid: `uid-${nodeName}`,
      resourceVersion: "1",
      labels: {
        "csi.storage.k8s.io/drivername": options.driver ?? DRIVER,
        "csi.storage.k8s.io/managed-by": `external-provisioner-${nodeName}`,
      },
    },
    storageClassName: options.className ?? "fast",
    nodeTopology: { matchLabels: { [TOPOLOGY_KEY]: nodeName } },
    capacity: size,
    ...(options.maximumVolumeSize ? { maximumVolumeSize: options.maximumVolumeSize } : {}),
  };
}

/** The agent pod of a node, ready unless told otherwise. */
export function agentPod(
  nodeName: string,
  options: { ready?: boolean; args?: string[] } = {},
): PodInfo {
  const pod: PodInfo = {
    namespace: "csi-node-provisioner",
    name: `csi-node-provisioner-${nodeName}`,
    nodeName,
    phase: "Running",
    ready: options.ready === false
      ? { status: "False", reason: "ContainersNotReady", message: "containers not ready" }
      : { status: "True" },
    labels: { "app.kubernetes.io/name": "csi-node-provisioner" },
    claimNames: [],
    agentArgs: options.args ?? ["--csi-address=/csi/csi.sock", "--node-deployment"],
  };
  return pod;
}

/** A pod of the claim's namespace that uses it. */
export function consumer(options: { node?: string; unschedulable?: string } = {}): PodInfo {
  return {
    namespace: "apps",
    name: "app",
    nodeName: options.node ?? "",
    phase: "Pending",
    unschedulable: options.unschedulable === undefined
      ? undefined
      : { reason: "Unschedulable", message: options.unschedulable },
    labels: {},
    claimNames: ["data"],
    agentArgs: [],
  };
}

/** A snapshot: claim `apps/data` of class `fast` (5Gi, node-a selected unless overridden). */
export function snapshot(overrides: Partial<ExplainSnapshot> = {}): ExplainSnapshot {
  return {
    claim: { ...claim({ spec: { resources: { requests: { storage: "5Gi" } } } }) },
    storageClass: storageClass(),
    className: "fast",
    volume: undefined,
    madeFor: undefined,
    volumeAttributesClass: undefined,
    nodes: NODES.map(node),
    agentDrivers: [DRIVER],
    capacities: [capacity("node-a", "10Gi"), capacity("node-b", "20Gi"), capacity("node-c", "3Gi")],
    agentPods: NODES.map((name) => agentPod(name)),
    consumers: [],
    events: [],
    now: NOW,
    ...overrides,
  };
}

/** The claim without a selected node. */
export function unselected(): ExplainSnapshot["claim"] {
  const base = snapshot().claim;
  const annotations = { ...base.metadata.annotations };
  delete annotations["volume.kubernetes.io/selected-node"];
  return { ...base, metadata: { ...base.metadata, annotations } };
}

/** The claim, still selected, before the PV controller names a provisioner on it. */
export function unnamed(): ExplainSnapshot["claim"] {
  const base = snapshot().claim;
  const annotations = { ...base.metadata.annotations };
  delete annotations["volume.kubernetes.io/storage-provisioner"];
  delete annotations["volume.beta.kubernetes.io/storage-provisioner"];
  return { ...base, metadata: { ...base.metadata, annotations } };
}
