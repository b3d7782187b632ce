/**
 * The agent's validated configuration: every flag of upstream csi-provisioner
 * (cmd/csi-provisioner/csi-provisioner.go, and the shared sidecar flags of
 * csi-lib-utils' standardflags) plus the environment it reads (NODE_NAME,
 * NAMESPACE, POD_NAME, KUBECONFIG). Durations are milliseconds.
 */
export interface Config {
  // Provisioner flags (cmd/csi-provisioner/csi-provisioner.go)
  master: string;
  kubeconfig: string;
  volumeNamePrefix: string;
  volumeNameUuidLength: number;
  retryIntervalStartMs: number;
  retryIntervalMaxMs: number;
  workerThreads: number;
  cloningProtectionThreads: number;
  snapshotOrphanSweepIntervalMs: number;
  capacityThreads: number;
  timeoutMs: number;
  /** The intent journal's file (the default is resolved from csiAddress). */
  journalPath: string;
  strictTopology: boolean;
  immediateTopology: boolean;
  extraCreateMetadata: boolean;
  defaultFstype: string;
  kubeApiCapacityQps: number;
  kubeApiCapacityBurst: number;
  enableCapacity: boolean;
  capacityForImmediateBinding: boolean;
  capacityPollIntervalMs: number;
  capacityWithdrawAfterMs: number;
  /** This agent's addition: 0 off; how long a Node must be gone before its volumes are released. */
  nodeLossReleaseAfterMs: number;
  /** -1 none, 0 the pod, 1 the pod's controller, 2 that controller's controller. */
  capacityOwnerrefLevel: number;
  /** This agent's addition: the Node owns the capacity objects (wins over the level). */
  capacityOwnerNode: boolean;
  /** This agent's addition: expand this node's volumes (external-resizer's work). */
  enableResizer: boolean;
  /** This agent's addition: a watch silent this long is stalled and relisted. */
  watchIdleTimeoutMs: number;
  /** This agent's addition: /readyz fails once an informer fails for longer than this. */
  readinessWindowMs: number;
  nodeDeployment: boolean;
  nodeDeploymentImmediateBinding: boolean;
  nodeDeploymentBaseDelayMs: number;
  nodeDeploymentMaxDelayMs: number;
  controllerPublishReadonly: boolean;
  preventVolumeModeConversion: boolean;
  featureGates: FeatureGates;

  // Shared sidecar flags (csi-lib-utils standardflags/flags.go)
  csiAddress: string;
  leaderElection: boolean;
  leaderElectionNamespace: string;
  leaderElectionLeaseDurationMs: number;
  leaderElectionRenewDeadlineMs: number;
  leaderElectionRetryPeriodMs: number;
  leaderElectionLabels: Record<string, string>;
  kubeApiQps: number;
  kubeApiBurst: number;
  /** host:port of the diagnostics server ("" = none); --metrics-address lands here too. */
  httpEndpoint: string;
  metricsPath: string;

  // Logging (klog)
  verbosity: number;
  /** "text" or "json" once validated. */
  loggingFormat: string;

  // Environment
  nodeName: string;
  namespace: string;
  podName: string;
}

/** Feature gates upstream knows; unknown gates are a start-up error, as in component-base. */
export interface FeatureGates {
  Topology: boolean;
  CrossNamespaceVolumeDataSource: boolean;
  VolumeAttributesClass: boolean;
  /** Whether VolumeAttributesClass was set explicitly (upstream auto-disables it otherwise). */
  VolumeAttributesClassExplicit: boolean;
  ReleaseLeaderElectionOnExit: boolean;
}

/** What the command line asks for. */
export type ParseOutcome =
  | { kind: "run"; config: Config }
  | { kind: "help"; text: string }
  | { kind: "version" }
  /** --journal-dump: print the journal at this path and exit. */
  | { kind: "journalDump"; path: string }
  | { kind: "invalid"; problems: string[] };
