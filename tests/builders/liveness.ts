/** Agents as the Lease watchers see them, and a StorageClass that opts in to lost-claim deletion. */
import type { AgentSighting } from "../../lib/liveness/view.ts";
import type { StorageClass } from "../../lib/model/objects.ts";
import { ANN_DELETE_CLAIMS_OF_LOST_NODES } from "../../lib/delete/lost/volumes.ts";

/** The agent of `node`, alive until `aliveUntilMs`, with the Lease's notes of `extra`. */
export function sighting(
  node: string,
  aliveUntilMs: number,
  extra: Partial<AgentSighting> = {},
): AgentSighting {
  return {
    publisher: `external-provisioner-${node}`,
    node,
    lease: `lease-${node}`,
    renewedAtMs: 0,
    aliveUntilMs,
    ...extra,
  };
}

/** Class `name` of `driver` with csi-node-provisioner.io/delete-claims-of-lost-nodes: "true". */
export function optInClass(name: string, driver: string): StorageClass {
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: "1",
      annotations: { [ANN_DELETE_CLAIMS_OF_LOST_NODES]: "true" },
    },
    provisioner: driver,
  };
}
