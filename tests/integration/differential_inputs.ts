/**
 * The inputs of differential_test.ts: one StorageClass with parameters,
 * secrets of several purposes, mount options, reclaim policy and allowed
 * topologies; a VolumeAttributesClass; and claims that must bind (a
 * filesystem with several access modes and the VAC, a raw block volume) or
 * fail (refused before CreateVolume, refused by the driver).
 */
import type { V1PersistentVolumeClaimSpec } from "@kubernetes/client-node";
import { TEST_TOPOLOGY_KEY } from "../cluster/nodes.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { createNamespace } from "../cluster/workloads.ts";

export const NAMESPACE = "differential";
export const DIFFERENTIAL_CLASS = "differential";
const P = "csi.storage.k8s.io/";

/** A claim both agents get, and whether it is to bind or to fail. */
export interface ClaimInput {
  name: string;
  size: string;
  spec: Partial<V1PersistentVolumeClaimSpec>;
  storageClass?: string;
  outcome: "bound" | "failed";
}

export const CLAIMS: readonly ClaimInput[] = [
  {
    name: "data",
    size: "1G",
    spec: {
      accessModes: ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"],
      volumeAttributesClassName: "gold",
    },
    outcome: "bound",
  },
  {
    name: "raw",
    size: "96Mi",
    spec: { accessModes: ["ReadWriteOncePod"], volumeMode: "Block" },
    outcome: "bound",
  },
  // Refused before CreateVolume, and refused by the driver (InvalidArgument): same Events.
  {
    name: "selector",
    size: "1Gi",
    spec: { selector: { matchLabels: { a: "b" } } },
    outcome: "failed",
  },
  { name: "gold-pool", size: "1Gi", spec: {}, storageClass: "no-gold-pool", outcome: "failed" },
];

/** Namespace, Secrets, VolumeAttributesClass and the StorageClass both agents provision from. */
export async function createInputs(cluster: RunningCluster): Promise<void> {
  const { admin } = cluster;
  await createNamespace(admin, NAMESPACE);
  const secrets = [...CLAIMS.map((claim) => `creds-${claim.name}`), "stage", "expand", "modify"];
  for (const name of secrets) {
    await admin.core.createNamespacedSecret({
      namespace: NAMESPACE,
      body: { metadata: { name }, stringData: { user: "admin", password: name } },
    });
  }
  await admin.storage.createVolumeAttributesClass({
    body: {
      metadata: { name: "gold" },
      driverName: cluster.driverName,
      parameters: { iops: "3000" },
    },
  });
  await admin.storage.createStorageClass({
    body: {
      metadata: { name: "no-gold-pool" },
      provisioner: cluster.driverName,
      parameters: { kind: "gold" },
      volumeBindingMode: "WaitForFirstConsumer",
    },
  });
  await admin.storage.createStorageClass({
    body: {
      metadata: { name: DIFFERENTIAL_CLASS },
      provisioner: cluster.driverName,
      parameters: {
        kind: "fast",
        tier: "gold",
        [`${P}provisioner-secret-name`]: "creds-${pvc.name}",
        [`${P}provisioner-secret-namespace`]: "${pvc.namespace}",
        [`${P}node-stage-secret-name`]: "stage",
        [`${P}node-stage-secret-namespace`]: NAMESPACE,
        [`${P}controller-expand-secret-name`]: "expand",
        [`${P}controller-expand-secret-namespace`]: NAMESPACE,
        [`${P}controller-modify-secret-name`]: "modify",
        [`${P}controller-modify-secret-namespace`]: NAMESPACE,
      },
      mountOptions: ["noatime", "nodiratime"],
      // Delete, not the PV default Retain, so that a PV without the class's policy shows. (With
      // Retain, upstream takes its finalizer off the bound PV moments later: the delete path's
      // business, and a race for a snapshot of the PV.)
      reclaimPolicy: "Delete",
      allowVolumeExpansion: true,
      volumeBindingMode: "WaitForFirstConsumer",
      allowedTopologies: [{
        matchLabelExpressions: [{ key: TEST_TOPOLOGY_KEY, values: ["node-a", "node-x"] }],
      }],
    },
  });
}
