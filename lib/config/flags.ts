/**
 * The one table of command-line flags: every flag of upstream csi-provisioner
 * at HEAD, with its default and meaning. The parser, the `--help` text and the
 * flag section of docs/flags.md are all generated from it.
 */
import type { Config } from "./types.ts";

/** How a flag's value is parsed. */
export type FlagType =
  | "bool"
  | "string"
  | "int"
  | "float"
  | "duration"
  | "featureGates"
  | "labels";

/** The help sections, in upstream's order of definition. */
export type FlagSection = "provisioner" | "sidecar" | "logging";

/** One flag. */
export interface FlagSpec {
  name: string;
  type: FlagType;
  /** Default as Go prints it; parsed by the same parser as user input. */
  default: string;
  usage: string;
  section: FlagSection;
  /** The Config field the flag sets; absent for flags accepted as no-ops. */
  field?: keyof Config;
  /** Why the flag is accepted but has no effect in a node agent. */
  noop?: string;
}

type Row = [name: string, type: FlagType, def: string, field: keyof Config | null, usage: string];

const NODE_AGENT_HAS_NO_LEADER =
  "no-op: every node agent works on its own node, there is no leader";

const PROVISIONER: Row[] = [
  [
    "master",
    "string",
    "",
    "master",
    "Master URL to build a client config from. Either this or kubeconfig needs to be set if the agent runs out of cluster.",
  ],
  [
    "volume-name-prefix",
    "string",
    "pvc",
    "volumeNamePrefix",
    "Prefix of PersistentVolume and CSI volume names.",
  ],
  [
    "volume-name-uuid-length",
    "int",
    "-1",
    "volumeNameUuidLength",
    "Length of the claim UID in volume names: -1 keeps the whole UID, otherwise dashes are removed and the UID is cut to this length.",
  ],
  [
    "retry-interval-start",
    "duration",
    "1s",
    "retryIntervalStartMs",
    "Initial retry interval of failed provisioning or deletion. It doubles with each failure, up to retry-interval-max.",
  ],
  [
    "retry-interval-max",
    "duration",
    "5m0s",
    "retryIntervalMaxMs",
    "Maximum retry interval of failed provisioning or deletion (honoured: there is no 15-minute resync).",
  ],
  [
    "worker-threads",
    "int",
    "100",
    "workerThreads",
    "Number of claim workers, and separately of volume workers: the most CreateVolume and DeleteVolume calls in flight.",
  ],
  [
    "cloning-protection-threads",
    "int",
    "1",
    "cloningProtectionThreads",
    "Number of workers removing the cloning-protection finalizer.",
  ],
  [
    "snapshot-orphan-sweep-interval",
    "duration",
    "5m0s",
    "snapshotOrphanSweepIntervalMs",
    "How often snapshot source-protection finalizers of no longer referenced VolumeSnapshots are removed. 0 disables the sweep.",
  ],
  [
    "capacity-threads",
    "int",
    "1",
    "capacityThreads",
    "Number of workers updating CSIStorageCapacity objects.",
  ],
  [
    "journal-path",
    "string",
    "",
    "journalPath",
    "(csi-node-provisioner only) File of the intent journal: each CreateVolume is recorded there before it is sent and cleared once its PV is saved or its volume deleted, so that a volume whose claim goes away while the agent is down is deleted, not leaked. Put it on the node's disk (a hostPath). Empty: csi-node-provisioner-journal.json in the directory of --csi-address, the driver's socket directory.",
  ],
  [
    "journal-dump",
    "bool",
    "false",
    null,
    "(csi-node-provisioner only) Print the intent journal (--journal-path) as JSON and exit, without changing it. Exit code 1 when it is missing or unreadable.",
  ],
  [
    "timeout",
    "duration",
    "10s",
    "timeoutMs",
    "Deadline of every CSI call (CreateVolume, DeleteVolume, GetCapacity, Probe, identity, capabilities, NodeGetInfo).",
  ],
  [
    "strict-topology",
    "bool",
    "false",
    "strictTopology",
    "Pass only the selected node's topology as requisite and preferred to CreateVolume.",
  ],
  [
    "immediate-topology",
    "bool",
    "true",
    "immediateTopology",
    "For Immediate binding without a selected node, pass the aggregated topology to CreateVolume.",
  ],
  [
    "extra-create-metadata",
    "bool",
    "false",
    "extraCreateMetadata",
    "Add csi.storage.k8s.io/pvc/name, pvc/namespace and pv/name to the CreateVolume parameters.",
  ],
  [
    "enable-pprof",
    "bool",
    "false",
    null,
    "no-op: serves Go's pprof in the Go sidecar; this agent has no Go runtime to profile.",
  ],
  [
    "default-fstype",
    "string",
    "",
    "defaultFstype",
    "File system type of volumes whose StorageClass sets none. Empty leaves it to the driver.",
  ],
  [
    "kube-api-capacity-qps",
    "float",
    "1",
    "kubeApiCapacityQps",
    "QPS of the Kubernetes client that writes CSIStorageCapacity objects.",
  ],
  [
    "kube-api-capacity-burst",
    "int",
    "5",
    "kubeApiCapacityBurst",
    "Burst of the Kubernetes client that writes CSIStorageCapacity objects.",
  ],
  [
    "enable-capacity",
    "bool",
    "false",
    "enableCapacity",
    "Publish CSIStorageCapacity objects for this node (needs NAMESPACE, and POD_NAME when owned).",
  ],
  [
    "capacity-for-immediate-binding",
    "bool",
    "false",
    "capacityForImmediateBinding",
    "Also publish capacity for StorageClasses with Immediate binding. With --enable-capacity, the Immediate binding race (--node-deployment-immediate-binding) then also reads every node's objects in NAMESPACE: a node with more room tries sooner, and one agent writes the NotEnoughCapacity summary of a claim no node has room for.",
  ],
  [
    "capacity-poll-interval",
    "duration",
    "1m0s",
    "capacityPollIntervalMs",
    "How often all capacities are polled with GetCapacity.",
  ],
  [
    "capacity-withdraw-after",
    "duration",
    "5m0s",
    "capacityWithdrawAfterMs",
    "(csi-node-provisioner only) With --enable-capacity: when a node's agent has not been alive for this long (its Lease in NAMESPACE, renewed every 30s, expired, or missing while the node has CSIStorageCapacity objects of the driver), one live agent deletes that node's CSIStorageCapacity objects, so that the scheduler stops sending claims there, with a Warning Event CapacityWithdrawn; the agent publishes them again when it is back. 0 disables the withdrawal (the metric of such nodes is still reported).",
  ],
  [
    "node-loss-release-after",
    "duration",
    "0s",
    "nodeLossReleaseAfterMs",
    "(csi-node-provisioner only) With --enable-capacity: when a node's agent is gone and its Node object has been deleted (and not created again) for this long, one live agent releases that node's volumes of the driver: Released PVs with reclaimPolicy Delete lose the provisioner's finalizer and are deleted (Warning Event LostNodeVolumeReleased); Bound PVs and their claims get a Warning Event LostNodeVolume, and their claims are deleted only where the StorageClass has the annotation csi-node-provisioner.io/delete-claims-of-lost-nodes: \"true\". Also releases, the same way, this node's volumes that the driver no longer has at start. 0 disables it (the volumes are only reported).",
  ],
  [
    "capacity-ownerref-level",
    "int",
    "1",
    "capacityOwnerrefLevel",
    "Owner of CSIStorageCapacity objects, counted from the pod named by POD_NAME: -1 none, 0 the pod, 1 its controller (DaemonSet), 2 that controller's controller.",
  ],
  [
    "capacity-owner-node",
    "bool",
    "false",
    "capacityOwnerNode",
    "(csi-node-provisioner only) Make this node's Node object the owner of its CSIStorageCapacity objects: they survive agent restarts and rollouts and are garbage-collected with the node. Wins over capacity-ownerref-level; needs no POD_NAME, and get on nodes (in upstream's RBAC).",
  ],
  [
    "watch-idle-timeout",
    "duration",
    "1m30s",
    "watchIdleTimeoutMs",
    "(csi-node-provisioner only) A watch that receives nothing for this long, not even the bookmark kube-apiserver sends every watch about once a minute, is stalled (a dead connection, a stuck proxy): it is ended and the resource listed again. Keep it above one minute.",
  ],
  [
    "readiness-window",
    "duration",
    "30s",
    "readinessWindowMs",
    "(csi-node-provisioner only) /readyz fails once an informer has failed to list or watch for longer than this, and recovers by itself with its next complete list or lasting watch.",
  ],
  [
    "enable-resizer",
    "bool",
    "false",
    "enableResizer",
    "(csi-node-provisioner only) Expand this node's volumes as external-resizer does, which has no per-node mode: for a Bound claim of this node's PVs whose class allows expansion and whose request grows past its capacity, call ControllerExpandVolume on this node's driver (it must have EXPAND_VOLUME) and write the PV's capacity, the claim's resize conditions, allocatedResources and allocatedResourceStatuses and external-resizer's Events. Needs patch on persistentvolumeclaims/status. Off by default: a cluster that runs a central external-resizer for the driver would expand twice; a start with this flag while that resizer's Lease (external-resizer-<driver> in NAMESPACE) is held exits with code 2.",
  ],
  [
    "node-deployment",
    "bool",
    "false",
    "nodeDeployment",
    "Run as a per-node agent: provision only claims selected to NODE_NAME. Required: this agent has no central mode.",
  ],
  [
    "node-deployment-immediate-binding",
    "bool",
    "true",
    "nodeDeploymentImmediateBinding",
    "Race to own claims of Immediate StorageClasses that no node has selected: after a delay, this node checks that the volume fits (GetCapacity, bounded by --timeout), then sets volume.kubernetes.io/selected-node to itself with the claim's resourceVersion as a precondition; the first node to do so provisions the volume, the others get a conflict. Races wait on timers: --worker-threads does not limit how many run. A node outside the class's allowedTopologies never races. With false, such claims are left alone.",
  ],
  [
    "node-deployment-base-delay",
    "duration",
    "20s",
    "nodeDeploymentBaseDelayMs",
    "Delay before this node tries to own an Immediate claim: this value doubled per failed attempt, capped at --node-deployment-max-delay, minus a random jitter of up to this value (so the first attempt waits up to this value). With --enable-capacity --capacity-for-immediate-binding, a node whose published capacity has room for 16, 256, 4096 or more such volumes makes its first attempt after 1/2, 1/3, 1/4 of that delay (1/(1+log2(room)/4)); one whose published capacity is too small does not try and calls no GetCapacity.",
  ],
  [
    "node-deployment-max-delay",
    "duration",
    "1m0s",
    "nodeDeploymentMaxDelayMs",
    "Cap of that delay. A claim that no node has room for, still unowned after this long, gets a Warning event NotEnoughCapacity, repeated at most hourly: with --enable-capacity --capacity-for-immediate-binding, one event written by one agent saying that no node has the space and which has the most; otherwise one per node that lacks the space, saying how much it has.",
  ],
  [
    "controller-publish-readonly",
    "bool",
    "false",
    "controllerPublishReadonly",
    "Set spec.csi.readOnly on the PV when the only access mode is ReadOnlyMany.",
  ],
  [
    "prevent-volume-mode-conversion",
    "bool",
    "true",
    "preventVolumeModeConversion",
    "Refuse a snapshot restore that changes the volume mode unless the content allows it.",
  ],
  [
    "feature-gates",
    "featureGates",
    "",
    "featureGates",
    "Feature gates as key=bool pairs: Topology (GA, default true), CrossNamespaceVolumeDataSource (alpha, false), VolumeAttributesClass (GA, true), ReleaseLeaderElectionOnExit (alpha, false).",
  ],
];

const SIDECAR: Row[] = [
  ["version", "bool", "false", null, "Print the version and exit."],
  [
    "kubeconfig",
    "string",
    "",
    "kubeconfig",
    "Path to a kubeconfig. The KUBECONFIG environment variable overrides it. Empty means in-cluster configuration.",
  ],
  [
    "csi-address",
    "string",
    "/run/csi/socket",
    "csiAddress",
    "Path (or unix:// URL) of the CSI driver socket.",
  ],
  [
    "leader-election",
    "bool",
    "false",
    "leaderElection",
    "Refused together with --node-deployment: every node would compete for one Lease and only one node would provision.",
  ],
  ["leader-election-namespace", "string", "", null, NODE_AGENT_HAS_NO_LEADER],
  ["leader-election-lease-duration", "duration", "15s", null, NODE_AGENT_HAS_NO_LEADER],
  ["leader-election-renew-deadline", "duration", "10s", null, NODE_AGENT_HAS_NO_LEADER],
  ["leader-election-retry-period", "duration", "5s", null, NODE_AGENT_HAS_NO_LEADER],
  ["leader-election-labels", "labels", "", null, NODE_AGENT_HAS_NO_LEADER],
  [
    "kube-api-qps",
    "float",
    "5",
    "kubeApiQps",
    "QPS of the main Kubernetes client (PVs, claims, events).",
  ],
  ["kube-api-burst", "int", "10", "kubeApiBurst", "Burst of the main Kubernetes client."],
  [
    "http-endpoint",
    "string",
    "",
    "httpEndpoint",
    "host:port of the HTTP server for metrics, /healthz and /readyz (e.g. :8080). Empty disables it.",
  ],
  [
    "metrics-address",
    "string",
    "",
    "httpEndpoint",
    "Deprecated alias of --http-endpoint; only one of the two may be set.",
  ],
  [
    "metrics-path",
    "string",
    "/metrics",
    "metricsPath",
    "Path of the Prometheus metrics on the HTTP server.",
  ],
  [
    "automaxprocs",
    "bool",
    "false",
    null,
    "no-op: sets GOMAXPROCS in the Go sidecar; meaningless here.",
  ],
];

const LOGGING: Row[] = [
  [
    "v",
    "int",
    "0",
    "verbosity",
    "Log verbosity, as klog's: a line logged at V(n) is written when -v is n or more. V(0) warnings and key events, V(2) info, V(4) debug (every CSI call), V(6) trace; errors at any -v.",
  ],
  ["vmodule", "string", "", null, "no-op: per-file verbosity of the Go logger."],
  [
    "logging-format",
    "string",
    "text",
    "loggingFormat",
    'Log format: "text" (klog\'s text lines, as Kubernetes components write them) or "json" (their JSON lines: ts, logger, msg, v, err and the key/value pairs).',
  ],
  ["log-flush-frequency", "duration", "5s", null, "no-op: log lines are written synchronously."],
  ["log-text-split-stream", "bool", "false", null, "no-op: all log lines go to stderr."],
  ["log-text-info-buffer-size", "string", "0", null, "no-op: log lines are not buffered."],
  ["log-json-split-stream", "bool", "false", null, "no-op: all log lines go to stderr."],
  ["log-json-info-buffer-size", "string", "0", null, "no-op: log lines are not buffered."],
];

function toSpecs(rows: Row[], section: FlagSection): FlagSpec[] {
  return rows.map(([name, type, def, field, usage]) => {
    const spec: FlagSpec = { name, type, default: def, usage, section };
    if (field !== null) spec.field = field;
    else if (name !== "version") spec.noop = usage;
    return spec;
  });
}

/** Every flag, in help order. */
export const FLAGS: readonly FlagSpec[] = [
  ...toSpecs(PROVISIONER, "provisioner"),
  ...toSpecs(SIDECAR, "sidecar"),
  ...toSpecs(LOGGING, "logging"),
];
