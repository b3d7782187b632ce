/**
 * The least capacity publishing a node agent can do, for the per-claim floor
 * program (bench/floor/per_claim.ts) when its command line has
 * --enable-capacity, as the fleet scenario's does: one GetCapacity and one
 * CSIStorageCapacity per WaitForFirstConsumer class of the driver, for the
 * agent's node, written once at start and never updated. kube-scheduler
 * needs those objects to place the fleet's pods at all; an agent that keeps
 * them current (as upstream and ours do) can only write more.
 */
import type { CsiCaller } from "../../lib/csi/connection.ts";
import type { VolumeCapability } from "../../lib/csi/types.ts";
import type { KubeRest } from "../../lib/kube/rest/client.ts";

/** The one capability the floor program asks for: a mounted single-node volume. */
export const MOUNT_SINGLE_WRITER: VolumeCapability = {
  mount: { fs_type: "", mount_flags: [] },
  access_mode: { mode: "SINGLE_NODE_WRITER" },
};

/** The parts of a StorageClass the floor program reads. */
export interface FloorClass {
  metadata: { name: string };
  provisioner: string;
  parameters?: Record<string, string>;
  reclaimPolicy?: string;
  volumeBindingMode?: string;
}

/** Publishes one CSIStorageCapacity per WaitForFirstConsumer class of the driver. */
export async function publishCapacityOnce(
  ports: { rest: KubeRest; csi: CsiCaller },
  options: {
    driver: string;
    node: string;
    topologyKey: string;
    namespace: string;
    classes: Iterable<FloorClass>;
  },
): Promise<void> {
  const segments = { [options.topologyKey]: options.node };
  for (const storageClass of options.classes) {
    if (storageClass.provisioner !== options.driver) continue;
    if (storageClass.volumeBindingMode !== "WaitForFirstConsumer") continue;
    const answer = await ports.csi.call("GetCapacity", {
      volume_capabilities: [MOUNT_SINGLE_WRITER],
      parameters: storageClass.parameters ?? {},
      accessible_topology: { segments },
    });
    await ports.rest.request({
      method: "POST",
      path: `/apis/storage.k8s.io/v1/namespaces/${options.namespace}/csistoragecapacities`,
      body: {
        apiVersion: "storage.k8s.io/v1",
        kind: "CSIStorageCapacity",
        metadata: {
          generateName: "csisc-",
          labels: {
            "csi.storage.k8s.io/drivername": options.driver,
            "csi.storage.k8s.io/managed-by": `per-claim-floor-${options.node}`,
          },
        },
        storageClassName: storageClass.metadata.name,
        nodeTopology: { matchLabels: segments },
        capacity: answer.available_capacity,
      },
    });
  }
}
