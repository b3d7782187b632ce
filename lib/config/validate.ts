/** Start-up checks of a parsed Config: each returns the problems it finds, as sentences. */
import type { Config } from "./types.ts";

type Check = (config: Config) => string | undefined;

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^:\s]*):(\d{1,5})$/;

const CHECKS: Check[] = [
  (c) =>
    c.nodeDeployment
      ? undefined
      : "--node-deployment must be set: csi-node-provisioner only runs as a per-node agent (there is no central mode; use external-provisioner for that)",
  // Upstream's message names "--enable-node-deployment", a flag that does not exist; ours names the real one.
  (c) =>
    c.nodeDeployment && c.nodeName === ""
      ? "The NODE_NAME environment variable must be set when using --node-deployment (set it from the downward API: spec.nodeName)"
      : undefined,
  (c) => c.nodeName === "" ? undefined : nodeNameProblem(c.nodeName),
  (c) =>
    c.nodeDeployment && c.leaderElection
      ? "--leader-election cannot be used with --node-deployment: every node's agent would compete for the same Lease, and only the one node holding it would provision, delete and publish capacity"
      : undefined,
  (c) =>
    c.nodeDeployment && !c.featureGates.Topology
      ? "--feature-gates=Topology=false cannot be used with --node-deployment: without topology, PVs carry no node affinity and no agent can tell which node holds a volume"
      : undefined,
  (c) =>
    c.enableCapacity && c.namespace === ""
      ? "need NAMESPACE env variable for CSIStorageCapacity objects (--enable-capacity is set; set it from the downward API: metadata.namespace)"
      : undefined,
  (c) =>
    c.enableCapacity && c.capacityOwnerrefLevel >= 0 && !c.capacityOwnerNode && c.podName === ""
      ? `need POD_NAME env variable to determine CSIStorageCapacity owner (--capacity-ownerref-level=${c.capacityOwnerrefLevel}; set it from the downward API: metadata.name, or use --capacity-ownerref-level=-1 or --capacity-owner-node)`
      : undefined,
  (c) => c.csiAddress === "" ? "--csi-address must not be empty" : undefined,
  (c) =>
    c.volumeNamePrefix === ""
      ? "--volume-name-prefix: volume name prefix cannot be of length 0"
      : undefined,
  (c) =>
    c.volumeNameUuidLength === -1 || c.volumeNameUuidLength >= 1
      ? undefined
      : `--volume-name-uuid-length must be -1 (whole UID) or at least 1, got ${c.volumeNameUuidLength}`,
  (c) => positive("--worker-threads", c.workerThreads),
  (c) => positive("--capacity-threads", c.capacityThreads),
  (c) => positive("--cloning-protection-threads", c.cloningProtectionThreads),
  (c) => positiveDuration("--timeout", c.timeoutMs),
  (c) => positiveDuration("--retry-interval-start", c.retryIntervalStartMs),
  (c) =>
    c.retryIntervalMaxMs < c.retryIntervalStartMs
      ? `--retry-interval-max (${c.retryIntervalMaxMs}ms) must not be shorter than --retry-interval-start (${c.retryIntervalStartMs}ms)`
      : undefined,
  (c) => positiveDuration("--capacity-poll-interval", c.capacityPollIntervalMs),
  (c) => positiveDuration("--watch-idle-timeout", c.watchIdleTimeoutMs),
  (c) => positiveDuration("--readiness-window", c.readinessWindowMs),
  (c) => positiveDuration("--node-deployment-base-delay", c.nodeDeploymentBaseDelayMs),
  (c) =>
    c.nodeDeploymentMaxDelayMs < c.nodeDeploymentBaseDelayMs
      ? "--node-deployment-max-delay must not be shorter than --node-deployment-base-delay"
      : undefined,
  (c) =>
    c.capacityWithdrawAfterMs < 0
      ? `--capacity-withdraw-after must not be negative (0 disables it), got ${c.capacityWithdrawAfterMs}ms`
      : undefined,
  (c) =>
    c.nodeLossReleaseAfterMs < 0
      ? `--node-loss-release-after must not be negative (0 disables it), got ${c.nodeLossReleaseAfterMs}ms`
      : undefined,
  (c) =>
    c.nodeLossReleaseAfterMs > 0 && !c.enableCapacity
      ? "--node-loss-release-after needs --enable-capacity: only the agents that publish capacity renew and watch the Leases that tell which nodes are gone"
      : undefined,
  (c) =>
    c.snapshotOrphanSweepIntervalMs < 0
      ? "--snapshot-orphan-sweep-interval must not be negative"
      : undefined,
  (c) =>
    c.capacityOwnerrefLevel < -1
      ? `--capacity-ownerref-level must be -1 or more, got ${c.capacityOwnerrefLevel}`
      : undefined,
  (c) =>
    c.kubeApiQps > 0 ? undefined : `--kube-api-qps must be greater than 0, got ${c.kubeApiQps}`,
  (c) => positive("--kube-api-burst", c.kubeApiBurst),
  (c) =>
    c.kubeApiCapacityQps > 0
      ? undefined
      : `--kube-api-capacity-qps must be greater than 0, got ${c.kubeApiCapacityQps}`,
  (c) => positive("--kube-api-capacity-burst", c.kubeApiCapacityBurst),
  (c) => c.verbosity < 0 ? `-v must not be negative, got ${c.verbosity}` : undefined,
  (c) =>
    c.loggingFormat === "text" || c.loggingFormat === "json"
      ? undefined
      : `--logging-format must be "text" or "json", got ${JSON.stringify(c.loggingFormat)}`,
  (c) =>
    c.metricsPath.startsWith("/")
      ? undefined
      : `--metrics-path must start with "/", got ${JSON.stringify(c.metricsPath)}`,
  (c) => httpEndpointProblem(c.httpEndpoint),
];

/** A DNS-1123 subdomain, what kube-apiserver requires of a Node's name (ValidateNodeName). */
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * No Node can have any other name, so no claim can ever select it: the agent
 * would wait forever and its capacity labels could be refused (422) forever.
 * Long names are fine: the managed-by label hashes them as upstream does.
 */
function nodeNameProblem(name: string): string | undefined {
  if (name.length <= 253 && DNS1123_SUBDOMAIN.test(name)) return undefined;
  return `NODE_NAME ${
    JSON.stringify(name.length > 300 ? `${name.slice(0, 300)}...` : name)
  } cannot be a node's name: a node name is at most 253 characters of lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (set it from the downward API: spec.nodeName)`;
}

function positive(flag: string, value: number): string | undefined {
  return value >= 1 ? undefined : `${flag} must be at least 1, got ${value}`;
}

function positiveDuration(flag: string, ms: number): string | undefined {
  return ms > 0 ? undefined : `${flag} must be a positive duration, got ${ms}ms`;
}

function httpEndpointProblem(endpoint: string): string | undefined {
  if (endpoint === "") return undefined;
  const match = HOST_PORT.exec(endpoint);
  const port = Number(match?.[2]);
  if (match === null || port > 65535) {
    return `--http-endpoint must be host:port or :port, got ${JSON.stringify(endpoint)}`;
  }
  return undefined;
}

/** Returns every problem of the config, in flag order. */
export function validateConfig(
  config: Config,
  facts: { httpEndpointAndMetricsAddress: boolean },
): string[] {
  const problems = CHECKS.map((check) => check(config)).filter((p): p is string => p !== undefined);
  if (facts.httpEndpointAndMetricsAddress) {
    problems.push(
      "only one of --metrics-address and --http-endpoint can be set (--metrics-address is deprecated)",
    );
  }
  return problems;
}
