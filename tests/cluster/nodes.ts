/**
 * Fake nodes: real Node and CSINode objects for machines that have no kubelet.
 * What a kubelet would maintain is written once: a Ready condition and
 * resources (through the status subresource, like a kubelet), the hostname and
 * CSI topology labels, the attach/detach annotation, and the CSINode entry the
 * node-driver-registrar would have added.
 *
 * With no kubelet, pods bound to a fake node never run: tests look at
 * spec.nodeName and at claim and volume state, not at pod phase.
 */

import type { V1CSIDriver, V1Node, V1NodeStatus, V1StorageClass } from "@kubernetes/client-node";
import type { AdminClients } from "./kubeconfig.ts";

export const TEST_DRIVER_NAME = "test.csi.k8s.io";
export const TEST_TOPOLOGY_KEY = "topology.test.csi.k8s.io/node";

export interface FakeNodeOptions {
  driverName?: string;
  /** Label key whose value is the node name; also the CSINode topology key. */
  topologyKey?: string;
  /** Leave out the CSINode driver entry (no CSI driver on this node). */
  withoutDriver?: boolean;
}

/** `node-a`, `node-b`, ..., `node-z`, `node-aa`, ... */
export function fakeNodeNames(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `node-${alphabeticIndex(index)}`);
}

function alphabeticIndex(index: number): string {
  const letter = String.fromCharCode(97 + (index % 26));
  return index < 26 ? letter : alphabeticIndex(Math.floor(index / 26) - 1) + letter;
}

export function fakeNodeObject(name: string, options: FakeNodeOptions = {}): V1Node {
  const topologyKey = options.topologyKey ?? TEST_TOPOLOGY_KEY;
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        ...(options.withoutDriver ? {} : { [topologyKey]: name }),
      },
      // Without it the attach/detach controller leaves the node to its kubelet.
      annotations: { "volumes.kubernetes.io/controller-managed-attach-detach": "true" },
    },
    spec: {},
  };
}

function fakeNodeStatus(): V1NodeStatus {
  const resources = { cpu: "8", memory: "32Gi", pods: "250", "ephemeral-storage": "100Gi" };
  const now = new Date();
  const condition = (type: string, status: string, reason: string) => ({
    type,
    status,
    reason,
    message: "fake node of the csi-node-provisioner test cluster",
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  return {
    capacity: resources,
    allocatable: resources,
    conditions: [
      condition("Ready", "True", "KubeletReady"),
      condition("MemoryPressure", "False", "KubeletHasSufficientMemory"),
      condition("DiskPressure", "False", "KubeletHasNoDiskPressure"),
      condition("PIDPressure", "False", "KubeletHasSufficientPID"),
    ],
    addresses: [{ type: "InternalIP", address: "127.0.0.1" }],
    nodeInfo: {
      architecture: "amd64",
      operatingSystem: "linux",
      bootID: "",
      containerRuntimeVersion: "fake://0",
      kernelVersion: "",
      kubeProxyVersion: "",
      kubeletVersion: "v0.0.0-fake",
      machineID: "",
      osImage: "fake",
      systemUUID: "",
    },
  };
}

/** Creates the Node, its Ready status, and its CSINode (owned by the Node, as a kubelet does). */
export async function createFakeNode(
  admin: AdminClients,
  name: string,
  options: FakeNodeOptions = {},
): Promise<V1Node> {
  const created = await admin.core.createNode({ body: fakeNodeObject(name, options) });
  // Status is ignored on create: it goes through the status subresource.
  const node = await admin.core.replaceNodeStatus({
    name,
    body: { ...created, status: fakeNodeStatus() },
  });
  const driverName = options.driverName ?? TEST_DRIVER_NAME;
  const drivers = options.withoutDriver ? [] : [{
    name: driverName,
    nodeID: name,
    topologyKeys: [options.topologyKey ?? TEST_TOPOLOGY_KEY],
  }];
  await admin.storage.createCSINode({
    body: {
      metadata: {
        name,
        ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: node.metadata!.uid! }],
      },
      spec: { drivers },
    },
  });
  return node;
}

export function csiDriverObject(
  name: string,
  options: { attachRequired: boolean; storageCapacity?: boolean },
): V1CSIDriver {
  return {
    metadata: { name },
    spec: {
      attachRequired: options.attachRequired,
      storageCapacity: options.storageCapacity ?? true,
      podInfoOnMount: false,
      volumeLifecycleModes: ["Persistent"],
    },
  };
}

/** A WaitForFirstConsumer class selecting the driver pool `kind`, named `<prefix>-<kind>`. */
export function storageClassObject(
  kind: string,
  options: { driverName: string; prefix?: string },
): V1StorageClass {
  return {
    metadata: { name: `${options.prefix ?? "test"}-${kind}` },
    provisioner: options.driverName,
    parameters: { kind },
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
    allowVolumeExpansion: false,
  };
}
