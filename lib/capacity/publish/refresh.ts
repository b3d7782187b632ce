/**
 * The capacity publisher's one hook into provisioning and deletion: a
 * decorator around the CSI port, as upstream's pkg/capacity/provision.go
 * (provisionWrapper) wraps the Provisioner. Once CreateVolume, DeleteVolume
 * or ControllerExpandVolume has answered, whatever the answer, the driver's pools may have changed:
 * every class published for this node is queued for republishing at once,
 * before the PV is saved. Upstream refreshes every object of the volume's
 * topology segment; in node mode that is every object of this node. The
 * provisioning, delete and resize controllers do not know that capacity exists.
 */
import type { CallOptions, CsiCaller, CsiMethod, CsiMethodTypes } from "../../csi/connection.ts";

/** The calls after which the driver's free capacity may differ. */
const POOL_CHANGING: ReadonlySet<CsiMethod> = new Set([
  "CreateVolume",
  "DeleteVolume",
  "ControllerExpandVolume",
]);

/** What the decorator asks of the publisher. */
export interface PoolRefresh {
  /** Queues every class published for this node (coalesced with what is already queued). */
  refreshAll(): void;
}

/** `csi`, with a refresh of the published capacity after each call that may change a pool. */
export function refreshingCapacity(csi: CsiCaller, capacity: PoolRefresh): CsiCaller {
  return {
    call<M extends CsiMethod>(
      method: M,
      request: CsiMethodTypes[M]["request"],
      options?: CallOptions,
    ): Promise<CsiMethodTypes[M]["response"]> {
      const answer = csi.call(method, request, options);
      return POOL_CHANGING.has(method) ? answer.finally(() => capacity.refreshAll()) : answer;
    },
  };
}
