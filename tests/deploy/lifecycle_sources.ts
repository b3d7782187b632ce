/**
 * The data source steps of the RBAC end-to-end test's lifecycle: a
 * snapshot of a bound claim restored on its node, a clone of it, and a
 * restore whose pod is placed on the other node (explained, with the source
 * PV read to name its node). Each leaves no volume behind.
 */

import { deepStrictEqual, match } from "node:assert/strict";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { createVolumeSnapshot, waitForSnapshotReady } from "../cluster/snapshots.ts";
import { waitFor } from "../cluster/wait.ts";
import {
  affinityNodes,
  claimObject,
  forceDeletePod,
  podUsingClaim,
  waitForClaimBound,
} from "../cluster/workloads.ts";
import { CLASS, WORKLOADS } from "./lifecycle_steps.ts";

type Source = { kind: "VolumeSnapshot" | "PersistentVolumeClaim"; name: string };

async function createSourced(
  cluster: RunningCluster,
  claim: string,
  options: { node: string; source: Source },
): Promise<void> {
  const body = claimObject(claim, { storageClass: CLASS, size: "1Gi" });
  body.spec!.dataSource = options.source.kind === "VolumeSnapshot"
    ? { ...options.source, apiGroup: "snapshot.storage.k8s.io" }
    : options.source;
  await cluster.admin.core.createNamespacedPersistentVolumeClaim({ namespace: WORKLOADS, body });
  await cluster.admin.core.createNamespacedPod({
    namespace: WORKLOADS,
    body: podUsingClaim(claim, claim, options.node),
  });
}

async function deleteClaim(cluster: RunningCluster, claim: string): Promise<void> {
  await forceDeletePod(cluster.admin, WORKLOADS, claim);
  await cluster.admin.core.deleteNamespacedPersistentVolumeClaim({
    namespace: WORKLOADS,
    name: claim,
  });
}

/**
 * `source` (bound on `node`) is snapshotted, restored and cloned there; a
 * restore placed on `other` is explained instead of created. The new claims
 * are deleted and their volumes gone before this returns.
 */
export async function restoreAndClone(
  cluster: RunningCluster,
  options: { source: string; node: string; other: string },
): Promise<void> {
  const snapshot = `${options.source}-snap`;
  await createVolumeSnapshot(cluster.admin, {
    namespace: WORKLOADS,
    name: snapshot,
    claim: options.source,
  });
  await waitForSnapshotReady(cluster.admin, { namespace: WORKLOADS, name: snapshot });
  const made = [
    { claim: "restored", source: { kind: "VolumeSnapshot", name: snapshot } },
    { claim: "cloned", source: { kind: "PersistentVolumeClaim", name: options.source } },
  ] as const;
  const pvs: string[] = [];
  for (const { claim, source } of made) {
    await createSourced(cluster, claim, { node: options.node, source });
    const bound = await waitForClaimBound(cluster.admin, { namespace: WORKLOADS, name: claim });
    const pv = await cluster.admin.core.readPersistentVolume({ name: bound.spec!.volumeName! });
    deepStrictEqual(affinityNodes(pv, cluster.topologyKey), [options.node]);
    pvs.push(pv.metadata!.name!);
  }
  await createSourced(cluster, "misplaced", {
    node: options.other,
    source: { kind: "VolumeSnapshot", name: snapshot },
  });
  const explained = await waitFor(async () => {
    const events = await cluster.admin.core.listNamespacedEvent({
      namespace: WORKLOADS,
      fieldSelector: "involvedObject.name=misplaced,reason=ProvisioningFailed",
    });
    return events.items[0];
  }, { description: "the misplaced restore explained" });
  match(explained.message!, new RegExp(`=${options.node}\\b`));
  for (const claim of ["misplaced", ...made.map((m) => m.claim)]) await deleteClaim(cluster, claim);
  await waitFor(async () => {
    const existing = (await cluster.admin.core.listPersistentVolume()).items
      .map((pv) => pv.metadata!.name);
    return pvs.every((pv) => !existing.includes(pv));
  }, { description: "the restored and cloned volumes deleted", timeoutMs: 60_000 });
}
