/**
 * Helpers for the restore and clone tests (upstream hostpath driver, democratic-csi):
 * a file written into a volume's directory on its node (the driver keeps
 * each volume as `<state dir>/<volume id>`, and copies it for restores and
 * clones), claims with a data source pinned to a node, and the finalizers of
 * the sources.
 */
import { join } from "node:path";
import type { V1PersistentVolumeClaim } from "@kubernetes/client-node";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { readSnapshotObject, type VolumeSnapshotObject } from "../cluster/snapshots.ts";
import { waitFor } from "../cluster/wait.ts";
import assert from "node:assert/strict";
import {
  claimObject,
  forceDeletePod,
  podUsingClaim,
  waitForClaimBound,
} from "../cluster/workloads.ts";
import { createVolumeCallsFor, waitForClaimEvent } from "./support.ts";

export const CLONE_FINALIZER = "provisioner.storage.kubernetes.io/cloning-protection";
export const SNAPSHOT_FINALIZER =
  "provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection";

/** The directory of a bound claim's volume on the node that holds it. */
export async function volumeDirectory(
  cluster: RunningCluster,
  ref: { namespace: string; name: string; node: string },
): Promise<string> {
  const claim = await waitForClaimBound(cluster.admin, ref);
  const pv = await cluster.admin.core.readPersistentVolume({ name: claim.spec!.volumeName! });
  return join(cluster.node(ref.node).stateDir, pv.spec!.csi!.volumeHandle);
}

/** A claim (1Gi, the cluster's fast class) with an optional data source, and its pod on `node`. */
export async function createClaimOn(
  cluster: RunningCluster,
  options: {
    namespace: string;
    name: string;
    node: string;
    dataSource?: { kind: "VolumeSnapshot" | "PersistentVolumeClaim"; name: string };
    pod?: boolean;
    /** Default: the cluster's fast class. */
    storageClass?: string;
  },
): Promise<V1PersistentVolumeClaim> {
  const body = claimObject(options.name, {
    storageClass: options.storageClass ?? cluster.storageClassName("fast"),
    size: "1Gi",
  });
  if (options.dataSource) {
    body.spec!.dataSource = {
      ...options.dataSource,
      ...(options.dataSource.kind === "VolumeSnapshot"
        ? { apiGroup: "snapshot.storage.k8s.io" }
        : {}),
    };
  }
  const claim = await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: options.namespace,
    body,
  });
  if (options.pod ?? true) await createPodOn(cluster, options);
  return claim;
}

/** A pod using the claim named like it, placed on `node` by a nodeSelector. */
export async function createPodOn(
  cluster: RunningCluster,
  options: { namespace: string; name: string; node: string; podName?: string },
): Promise<void> {
  await cluster.admin.core.createNamespacedPod({
    namespace: options.namespace,
    body: podUsingClaim(options.podName ?? options.name, options.name, options.node),
  });
}

/** The finalizers of a claim. */
export async function claimFinalizers(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
): Promise<string[]> {
  const claim = await cluster.admin.core.readNamespacedPersistentVolumeClaim(ref);
  return claim.metadata?.finalizers ?? [];
}

/** The finalizers of a VolumeSnapshot. */
export async function snapshotFinalizers(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
): Promise<string[]> {
  const snapshot = await readSnapshotObject<
    VolumeSnapshotObject & {
      metadata: { finalizers?: string[] };
    }
  >(cluster.admin, { kind: "VolumeSnapshot", ...ref });
  return snapshot.metadata.finalizers ?? [];
}

/** Waits until the claim has (or no longer has) the finalizer. */
export async function waitForFinalizer(
  read: () => Promise<string[]>,
  options: { finalizer: string; present: boolean; what: string; timeoutMs?: number },
): Promise<void> {
  await waitFor(async () => (await read()).includes(options.finalizer) === options.present, {
    description: `${options.what} ${options.present ? "with" : "without"} ${options.finalizer}`,
    timeoutMs: options.timeoutMs ?? 30_000,
  });
}

/**
 * A claim whose pod is placed on node-b while its source is on node-a: a
 * Warning that names node-a (matching `message`), no CreateVolume on node-b;
 * once the pod is moved to node-a, `madeOnNodeA` checks the copy made there.
 */
export async function misplacedIsExplained(
  cluster: RunningCluster,
  options: {
    namespace: string;
    name: string;
    dataSource: { kind: "VolumeSnapshot" | "PersistentVolumeClaim"; name: string };
    message: RegExp;
    storageClass?: string;
    madeOnNodeA: (name: string) => Promise<void>;
  },
): Promise<void> {
  const { namespace, name } = options;
  const claim = await createClaimOn(cluster, {
    namespace,
    name,
    node: "node-b",
    dataSource: options.dataSource,
    ...(options.storageClass ? { storageClass: options.storageClass } : {}),
  });
  const event = await waitForClaimEvent(cluster, { namespace, name }, {
    reason: "ProvisioningFailed",
    message: (text) => text.includes('on node "node-b"'),
  });
  assert.match(event.message!, options.message);
  await forceDeletePod(cluster.admin, namespace, name);
  await createPodOn(cluster, { namespace, name, node: "node-a", podName: `${name}-moved` });
  await options.madeOnNodeA(name);
  assert.deepEqual(await createVolumeCallsFor(cluster.node("node-b"), claim.metadata!.uid!), []);
}
