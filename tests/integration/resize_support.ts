/**
 * Helpers of the resize tests: a class that allows expansion, a bound claim
 * of node-a, a new request, and the fields of the PV and claim that volume
 * expansion writes.
 */
import type { V1PersistentVolumeClaim } from "@kubernetes/client-node";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { waitForClaimBound } from "../cluster/workloads.ts";
import { mergePatch, selectedClaim } from "./support.ts";

/** hostpath's --max-volume-size, in bytes: the pool's size, so that a bigger request fails. */
export const MAX_VOLUME_BYTES = 10n * 2n ** 30n;

/** Lets the class of a pool expand its volumes (allowVolumeExpansion may change on a class). */
export async function allowExpansion(cluster: RunningCluster, className: string): Promise<void> {
  await cluster.admin.storage.patchStorageClass({
    name: className,
    body: { allowVolumeExpansion: true },
  }, mergePatch);
}

/** Creates a 1Gi claim selected to `node` and waits until it is Bound; its PV's name. */
export async function boundClaimOf(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
  options: { node: string; className: string },
): Promise<string> {
  await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: ref.namespace,
    body: selectedClaim(ref.name, {
      node: options.node,
      storageClass: options.className,
      driverName: cluster.driverName,
    }),
  });
  const claim = await waitForClaimBound(cluster.admin, ref);
  return claim.spec!.volumeName!;
}

/** Sets the claim's storage request. */
export async function requestSize(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
  size: string,
): Promise<void> {
  await cluster.admin.core.patchNamespacedPersistentVolumeClaim({
    ...ref,
    body: { spec: { resources: { requests: { storage: size } } } },
  }, mergePatch);
}

/** What expansion writes, as a user reads it with kubectl. */
export interface ResizeView {
  pvCapacity: string | undefined;
  capacity: string | undefined;
  allocated: string | undefined;
  status: string | undefined;
  /** The resize conditions' types, in order. */
  conditions: string[];
  /** Each condition's message, by type. */
  messages: Record<string, string>;
}

export async function resizeView(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
): Promise<ResizeView> {
  const claim: V1PersistentVolumeClaim = await cluster.admin.core
    .readNamespacedPersistentVolumeClaim(ref);
  const pv = await cluster.admin.core.readPersistentVolume({ name: claim.spec!.volumeName! });
  const conditions = claim.status?.conditions ?? [];
  return {
    pvCapacity: pv.spec?.capacity?.["storage"],
    capacity: claim.status?.capacity?.["storage"],
    allocated: claim.status?.allocatedResources?.["storage"],
    status: claim.status?.allocatedResourceStatuses?.["storage"],
    conditions: conditions.map((condition) => condition.type),
    messages: Object.fromEntries(
      conditions.map((condition) => [condition.type, condition.message ?? ""]),
    ),
  };
}

/** Waits until the claim's view passes `check`; returns it. */
export async function waitForView(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
  check: (view: ResizeView) => boolean,
  description: string,
): Promise<ResizeView> {
  let last: ResizeView | undefined;
  try {
    return await waitFor(async () => {
      last = await resizeView(cluster, ref);
      return check(last) ? last : undefined;
    }, { description, timeoutMs: 45_000, intervalMs: 200 });
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen ${JSON.stringify(last)}`);
  }
}
