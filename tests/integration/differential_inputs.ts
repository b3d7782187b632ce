/**
 * The inputs of differential_test.ts, for the upstream hostpath driver: the
 * StorageClasses (a default class without parameters, Retain, mountOptions
 * with secrets of every purpose named by templates and strict allowed
 * topologies, the fsType parameter, allowed topologies in two terms and
 * ones no node meets), a VolumeAttributesClass, the Secrets, and the claims
 * of each round of agent flags (with and without --strict-topology and
 * --extra-create-metadata).
 */
import type { V1PersistentVolumeClaimSpec, V1StorageClass } from "@kubernetes/client-node";
import { HOSTPATH_TOPOLOGY_KEY } from "../cluster/hostpath.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { createNamespace } from "../cluster/workloads.ts";

export const NAMESPACE = "differential";
const P = "csi.storage.k8s.io/";

/** A claim both agents get, and whether it is to bind or to fail. */
export interface ClaimInput {
  name: string;
  size: string;
  spec: Partial<V1PersistentVolumeClaimSpec>;
  /** Left out: the claim names no class, and the API server gives it the default class. */
  storageClass?: string;
  annotations?: Record<string, string>;
  outcome: "bound" | "failed";
}

/** One set of agent flags, and the claims provisioned with it by each agent in turn. */
export interface Round {
  name: string;
  args: string[];
  claims: readonly ClaimInput[];
}

const COMMON_ARGS = ["--feature-gates=Topology=true", "--default-fstype=ext4", "-v=5"];

const topology = (...nodes: string[]) => ({
  matchLabelExpressions: [{ key: HOSTPATH_TOPOLOGY_KEY, values: nodes }],
});

const CLASSES: V1StorageClass[] = [
  {
    metadata: {
      name: "default-class",
      annotations: { "storageclass.kubernetes.io/is-default-class": "true" },
    },
    provisioner: "",
  },
  {
    metadata: { name: "retain" },
    provisioner: "",
    parameters: { kind: "fast" },
    reclaimPolicy: "Retain",
  },
  { metadata: { name: "plain" }, provisioner: "", parameters: { kind: "fast" } },
  {
    metadata: { name: "xfs" },
    provisioner: "",
    parameters: { kind: "fast", [`${P}fstype`]: "xfs" },
  },
  {
    metadata: { name: "secrets" },
    provisioner: "",
    parameters: {
      kind: "fast",
      tier: "gold",
      [`${P}provisioner-secret-name`]: "creds-${pvc.name}",
      [`${P}provisioner-secret-namespace`]: "${pvc.namespace}",
      [`${P}node-stage-secret-name`]: "stage-${pv.name}",
      [`${P}node-stage-secret-namespace`]: "${pvc.namespace}",
      [`${P}node-publish-secret-name`]: "publish-${pvc.annotations['team']}",
      [`${P}node-publish-secret-namespace`]: "${pvc.namespace}",
      [`${P}controller-expand-secret-name`]: "expand-${pvc.name}",
      [`${P}controller-expand-secret-namespace`]: NAMESPACE,
      [`${P}controller-modify-secret-name`]: "modify",
      [`${P}controller-modify-secret-namespace`]: NAMESPACE,
    },
    mountOptions: ["noatime", "nodiratime"],
    reclaimPolicy: "Delete",
    allowVolumeExpansion: true,
    allowedTopologies: [topology("node-a", "node-x")],
  },
  {
    metadata: { name: "two-terms" },
    provisioner: "",
    parameters: { kind: "fast" },
    // node-0 sorts first: non-strict, the preferred list is rotated to start at node-a.
    allowedTopologies: [topology("node-b"), topology("node-a"), topology("node-0")],
  },
  {
    metadata: { name: "elsewhere" },
    provisioner: "",
    parameters: { kind: "fast" },
    allowedTopologies: [topology("node-x")],
  },
  // A pool the driver does not have: hostpath answers ResourceExhausted.
  { metadata: { name: "gold-pool" }, provisioner: "", parameters: { kind: "gold" } },
];

const TEAM = { team: "blue" };

const DEFAULT_CLASS: ClaimInput = { name: "default", size: "1Gi", spec: {}, outcome: "bound" };
const SECRETS: ClaimInput = {
  name: "data",
  size: "1G",
  storageClass: "secrets",
  annotations: TEAM,
  spec: {
    accessModes: ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"],
    volumeAttributesClassName: "gold",
  },
  outcome: "bound",
};
const TWO_TERMS: ClaimInput = {
  name: "two-terms",
  size: "100Mi",
  storageClass: "two-terms",
  spec: {},
  outcome: "bound",
};
const ELSEWHERE: ClaimInput = {
  name: "elsewhere",
  size: "100Mi",
  storageClass: "elsewhere",
  spec: {},
  outcome: "failed",
};

export const ROUNDS: readonly Round[] = [
  {
    name: "--strict-topology --extra-create-metadata",
    args: ["--strict-topology", "--extra-create-metadata", ...COMMON_ARGS],
    claims: [
      DEFAULT_CLASS,
      { name: "kept", size: "200Mi", storageClass: "retain", spec: {}, outcome: "bound" },
      SECRETS,
      { name: "xfs", size: "300Mi", storageClass: "xfs", spec: {}, outcome: "bound" },
      {
        name: "block",
        size: "96Mi",
        storageClass: "plain",
        spec: { volumeMode: "Block" },
        outcome: "bound",
      },
      {
        name: "rwop",
        size: "64Mi",
        storageClass: "plain",
        spec: { accessModes: ["ReadWriteOncePod"] },
        outcome: "bound",
      },
      TWO_TERMS,
      ELSEWHERE,
      // Refused before CreateVolume, and by the driver (ResourceExhausted): same Events.
      {
        name: "selector",
        size: "1Gi",
        storageClass: "plain",
        spec: { selector: { matchLabels: { a: "b" } } },
        outcome: "failed",
      },
      { name: "gold", size: "1Gi", storageClass: "gold-pool", spec: {}, outcome: "failed" },
    ],
  },
  {
    name: "non-strict topology, no extra metadata",
    args: COMMON_ARGS,
    claims: [DEFAULT_CLASS, SECRETS, TWO_TERMS, ELSEWHERE],
  },
];

const SECRET_NAMES = [
  ...new Set(ROUNDS.flatMap((round) => round.claims).map((c) => `creds-${c.name}`)),
];

/** The provisioner Secrets' password values: they must reach the driver and no log. */
export const SECRET_VALUES: readonly string[] = SECRET_NAMES.map((name) => `pw-of-${name}`);

/** Namespace, Secrets, VolumeAttributesClass and StorageClasses both agents provision from. */
export async function createInputs(cluster: RunningCluster): Promise<void> {
  const { admin } = cluster;
  await createNamespace(admin, NAMESPACE);
  for (const name of SECRET_NAMES) {
    await admin.core.createNamespacedSecret({
      namespace: NAMESPACE,
      body: { metadata: { name }, stringData: { user: "admin", password: `pw-of-${name}` } },
    });
  }
  await admin.storage.createVolumeAttributesClass({
    body: {
      metadata: { name: "gold" },
      driverName: cluster.driverName,
      parameters: { iops: "3000" },
    },
  });
  for (const storageClass of CLASSES) {
    await admin.storage.createStorageClass({
      body: {
        volumeBindingMode: "WaitForFirstConsumer",
        ...storageClass,
        provisioner: cluster.driverName,
      },
    });
  }
}
