/**
 * The table of bad StorageClass and claim inputs for bad_input_test.ts: each
 * reaches the agent through the real API server (inputs the API server itself
 * refuses or rewrites are in bad_input_test.ts's API_REFUSED, checked to stay
 * so), and each must end in the exact Warning a user reads on the claim.
 *
 * Expected messages are written out literally, not built with the product's
 * own formatters, so a wrong location format fails here too.
 */
import type {
  V1PersistentVolumeClaim,
  V1StorageClass,
  V1TypedObjectReference,
  V1VolumeAttributesClass,
} from "@kubernetes/client-node";
import { HOSTPATH_DRIVER_NAME, HOSTPATH_TOPOLOGY_KEY } from "../cluster/hostpath.ts";

export const NAMESPACE = "bad-input";
const P = "csi.storage.k8s.io/";

/** Where a case's claim and class live, for its expected message. */
export interface CaseRef {
  namespace: string;
  claim: string;
  storageClass: string;
}

export interface BadInput {
  /** The claim's name; its StorageClass (when the case has one) is `bad-<name>`. */
  name: string;
  /** What is wrong, as a user would say it. */
  title: string;
  /** The case's own StorageClass: these fields over a WFFC class of the hostpath driver, pool "fast". */
  storageClass?: Partial<Pick<V1StorageClass, "parameters" | "allowedTopologies">>;
  /** The class the claim names instead of its own (one that does not exist). */
  claimClass?: string;
  claim?: {
    size?: string;
    spec?: Partial<NonNullable<V1PersistentVolumeClaim["spec"]>>;
    annotations?: Record<string, string>;
  };
  /** The node selected for the claim; default node-a (node-b's agent runs with --strict-topology). */
  node?: "node-a" | "node-b";
  /** The driver gets the CreateVolume and refuses it with this code: then no volume may exist. */
  driverRefuses?: "INVALID_ARGUMENT" | "RESOURCE_EXHAUSTED";
  /** The exact message of the agent's Warning ProvisioningFailed event. */
  message: (at: CaseRef) => string;
}

const atClass = (at: CaseRef, field: string) => `(StorageClass "${at.storageClass}", ${field})`;
const atClaim = (at: CaseRef, field: string) =>
  `(PersistentVolumeClaim "${at.namespace}/${at.claim}", ${field})`;
const param = (key: string) => `parameters["${key}"]`;

/** A VolumeAttributesClass of another driver, created before the cases. */
export const OTHER_DRIVER_VAC: V1VolumeAttributesClass = {
  metadata: { name: "other-driver-vac" },
  driverName: "other.csi.k8s.io",
  parameters: { iops: "3000" },
};

/**
 * A VolumeAttributesClass with a parameter the driver does not accept (it
 * runs with --accepted-mutable-parameter-names=iops).
 */
export const UNACCEPTED_PARAMETER_VAC: V1VolumeAttributesClass = {
  metadata: { name: "throughput-vac" },
  driverName: HOSTPATH_DRIVER_NAME,
  parameters: { throughput: "100" },
};

/** An allowedTopologies term that only a node named node-x satisfies. */
const ONLY_NODE_X = [{
  matchLabelExpressions: [{ key: HOSTPATH_TOPOLOGY_KEY, values: ["node-x"] }],
}];
const term = (node: string) => `[{${HOSTPATH_TOPOLOGY_KEY} ${node}}]`;

export const BAD_INPUTS: readonly BadInput[] = [
  {
    name: "reserved-key",
    title: "unknown reserved parameter key csi.storage.k8s.io/foo",
    storageClass: { parameters: { kind: "fast", [`${P}foo`]: "bar" } },
    message: (at) =>
      `failed to strip CSI Parameters of prefixed keys: found unknown parameter key ` +
      `"${P}foo" with reserved namespace ${P} ${atClass(at, param(`${P}foo`))}`,
  },
  {
    name: "both-fstype",
    title: "both fstype and csi.storage.k8s.io/fstype",
    storageClass: { parameters: { kind: "fast", fstype: "ext4", [`${P}fstype`]: "xfs" } },
    message: (at) =>
      `fstype specified in parameters with both "fstype" and "${P}fstype" keys ` +
      atClass(at, `${param(`${P}fstype`)} and ${param("fstype")}`),
  },
  {
    name: "secret-unknown-token",
    title: "a secret name template with an unknown token",
    storageClass: {
      parameters: secretParameters("provisioner", "${pvc.uid}-creds", "${pvc.namespace}"),
    },
    message: (at) =>
      `error resolving value "\${pvc.uid}-creds": invalid tokens: ["pvc.uid"] ` +
      atClass(at, param(`${P}provisioner-secret-name`)),
  },
  {
    name: "secret-namespace-token",
    title: "a secret namespace template with a claim-name token (name templates only)",
    storageClass: { parameters: secretParameters("provisioner", "creds", "${pvc.name}") },
    message: (at) =>
      `error resolving value "\${pvc.name}": invalid tokens: ["pvc.name"] ` +
      atClass(at, param(`${P}provisioner-secret-namespace`)),
  },
  {
    name: "secret-name-only",
    title: "a provisioner secret name without its namespace",
    storageClass: { parameters: { kind: "fast", [`${P}provisioner-secret-name`]: "creds" } },
    message: (at) =>
      "failed to get name and namespace template from params: either name and namespace for " +
      "Provisioner secrets specified, Both must be specified " +
      atClass(at, param(`${P}provisioner-secret-name`)),
  },
  {
    name: "secret-old-and-new",
    title: "deprecated and new provisioner secret keys together",
    storageClass: {
      parameters: {
        ...secretParameters("provisioner", "creds", "default"),
        csiProvisionerSecretName: "creds",
        csiProvisionerSecretNamespace: "default",
      },
    },
    message: (at) =>
      "failed to get name and namespace template from params: Provisioner secrets specified " +
      `in parameters with both "csi" and "${P}" keys ` +
      atClass(
        at,
        [
          "csiProvisionerSecretName",
          `${P}provisioner-secret-name`,
          "csiProvisionerSecretNamespace",
          `${P}provisioner-secret-namespace`,
        ].map(param).join(" and "),
      ),
  },
  {
    name: "secret-empty-value",
    title: "an empty node-stage secret name",
    storageClass: { parameters: secretParameters("node-stage", "", "default") },
    message: (at) =>
      "failed to get name and namespace template from params: NodeStage secrets specified in " +
      "parameters but value of either namespace or name is empty " +
      atClass(at, secretFields("node-stage")),
  },
  {
    name: "secret-invalid-name",
    title: "a secret template that expands to an invalid Secret name",
    storageClass: {
      parameters: secretParameters(
        "provisioner",
        "${pvc.annotations['example.com/team']}-creds",
        "${pvc.namespace}",
      ),
    },
    claim: { annotations: { "example.com/team": "Team_A" } },
    message: (at) =>
      `"\${pvc.annotations['example.com/team']}-creds" resolved to "Team_A-creds" which is not ` +
      `a valid secret name ${atClass(at, param(`${P}provisioner-secret-name`))}`,
  },
  {
    name: "secret-missing",
    title: "a provisioner secret that does not exist",
    storageClass: {
      parameters: secretParameters("provisioner", "no-such-secret", "${pvc.namespace}"),
    },
    // Upstream's wording, located at the parameters that named the Secret.
    message: (at) =>
      `error getting secret no-such-secret in namespace ${at.namespace}: ` +
      `secrets "no-such-secret" not found ${atClass(at, secretFields("provisioner"))}`,
  },
  {
    name: "class-missing",
    title: "a StorageClass that does not exist",
    claimClass: "no-such-class",
    message: (at) =>
      `storageClass "no-such-class" not found ${atClaim(at, "spec.storageClassName")}`,
  },
  {
    // The API server clamps 100Ei to 2^63-1 (see API_REFUSED) but keeps decimal 100E as is.
    name: "size-beyond-int64",
    title: "a size beyond int64 (100E)",
    claim: { size: "100E" },
    message: (at) =>
      `storage request "100E" is 100000000000000000000 bytes, more than the largest size CSI ` +
      `can carry (9223372036854775807 bytes) ${atClaim(at, "spec.resources.requests.storage")}`,
  },
  {
    name: "topology-excludes-node",
    title: "allowedTopologies that exclude node-a",
    storageClass: { allowedTopologies: ONLY_NODE_X },
    message: (at) =>
      `error generating accessibility requirements: topology ${term("node-a")} from selected ` +
      `node "node-a" is not in requisite: [${term("node-x")}] ${atClass(at, "allowedTopologies")}`,
  },
  {
    name: "topology-excludes-node-strict",
    title: "allowedTopologies that exclude node-b, whose agent runs with --strict-topology",
    storageClass: { allowedTopologies: ONLY_NODE_X },
    node: "node-b",
    message: (at) =>
      `error generating accessibility requirements: selected node '"node-b"' topology ` +
      `'${term("node-b")}' is not in allowed topologies: [${term("node-x")}] ` +
      atClass(at, "allowedTopologies"),
  },
  {
    name: "selector",
    title: "a claim with spec.selector",
    claim: { spec: { selector: { matchLabels: { tier: "gold" } } } },
    message: (at) => `claim Selector is not supported ${atClaim(at, "spec.selector")}`,
  },
  {
    // This cluster has no snapshot CRDs: the Warning says what to install.
    name: "snapshot-source",
    title: "a VolumeSnapshot data source on a cluster without the VolumeSnapshot API",
    claim: { spec: { dataSource: snapshotSource("snapshot.storage.k8s.io") } },
    message: (at) =>
      "error getting handle for DataSource Type VolumeSnapshot by Name nightly: error getting " +
      "snapshot nightly from api server: the VolumeSnapshot API (snapshot.storage.k8s.io/v1) is " +
      "not served by this cluster: install external-snapshotter's CRDs and snapshot-controller; " +
      "the claim is retried, no restart of csi-node-provisioner is needed " +
      atClaim(at, "spec.dataSource"),
  },
  {
    name: "clone-source",
    title: "a PersistentVolumeClaim (clone) data source that does not exist",
    claim: { spec: { dataSource: { kind: "PersistentVolumeClaim", name: "origin" } } },
    message: (at) =>
      "error getting handle for DataSource Type PersistentVolumeClaim by Name origin: error " +
      `getting PVC origin (namespace "${at.namespace}") from api server: persistentvolumeclaim ` +
      `"origin" not found ${atClaim(at, "spec.dataSource")}`,
  },
  {
    // Through dataSourceRef: the API server drops such a spec.dataSource, but copies the ref.
    name: "snapshot-wrong-group",
    title: "a VolumeSnapshot data source of another API group",
    claim: { spec: { dataSourceRef: snapshotSource("example.com") } },
    message: (at) =>
      "the PVC source does not belong to the right APIGroup. Expected snapshot.storage.k8s.io, " +
      `Got example.com ${atClaim(at, "spec.dataSource.apiGroup")}`,
  },
  {
    name: "vac-other-driver",
    title: "a VolumeAttributesClass of another driver",
    claim: { spec: { volumeAttributesClassName: OTHER_DRIVER_VAC.metadata!.name! } },
    message: (at) =>
      "VAC other-driver-vac referenced in PVC is for driver other.csi.k8s.io which does not " +
      `match driver name ${HOSTPATH_DRIVER_NAME} ${atClaim(at, "spec.volumeAttributesClassName")}`,
  },
  {
    name: "vac-missing",
    title: "a VolumeAttributesClass that does not exist",
    claim: { spec: { volumeAttributesClassName: "no-such-vac" } },
    message: (at) =>
      `volumeattributesclasses.storage.k8s.io "no-such-vac" not found ` +
      atClaim(at, "spec.volumeAttributesClassName"),
  },
  {
    name: "unaccepted-parameter",
    title: "a VolumeAttributesClass parameter the driver does not accept",
    claim: { spec: { volumeAttributesClassName: UNACCEPTED_PARAMETER_VAC.metadata!.name! } },
    driverRefuses: "INVALID_ARGUMENT",
    message: () =>
      "Volume provisioning failed with infeasible error. Retries will be delayed. " +
      "rpc error: code = InvalidArgument desc = invalid parameters: [throughput]",
  },
  {
    // The hostpath driver has no such pool, so none of it is left: the claim goes back to the
    // scheduler (selected-node removed), which here has no pod to place.
    name: "unknown-pool",
    title: "a kind parameter naming a pool the driver does not have",
    storageClass: { parameters: { kind: "gold" } },
    driverRefuses: "RESOURCE_EXHAUSTED",
    message: () =>
      "rpc error: code = ResourceExhausted desc = requested capacity 1073741824 exceeds " +
      'remaining capacity for "gold", 0 out of 0 already used',
  },
];

/** Class parameters naming a secret of one purpose (`provisioner`, `node-stage`, ...). */
function secretParameters(purpose: string, name: string, namespace: string) {
  return {
    kind: "fast",
    [`${P}${purpose}-secret-name`]: name,
    [`${P}${purpose}-secret-namespace`]: namespace,
  };
}

/** The location of a purpose's secret name and namespace parameters. */
function secretFields(purpose: string): string {
  return `${param(`${P}${purpose}-secret-name`)} and ${param(`${P}${purpose}-secret-namespace`)}`;
}

export function snapshotSource(apiGroup: string): V1TypedObjectReference {
  return { apiGroup, kind: "VolumeSnapshot", name: "nightly" };
}
