/**
 * The capacity publisher's options, from the flags and the driver's answers
 * at start-up, and the start-up refusals. Pure, so that the mapping is
 * tested on its own.
 */
import type { Config } from "../config/types.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import type { Segments } from "../csi/types.ts";
import type { DesiredOptions } from "./plan/desired.ts";
import { labelSelector, nodeLabels } from "../model/labels.ts";
import { capacityLabelProblems } from "./labels.ts";
import type { OwnerChoice } from "./owner_lookup.ts";
import { sortedSegment } from "./plan/segment.ts";
import { FatalError } from "../runtime/fatal.ts";

/** Everything the capacity parts are configured with. */
export interface CapacityOptions {
  desired: DesiredOptions;
  nodeName: string;
  /** NAMESPACE: where the objects live. */
  namespace: string;
  /** The node's segment from NodeGetInfo, keys sorted. */
  segment: Segments;
  labels: Record<string, string>;
  /** The informer's label selector. */
  labelSelector: string;
  owner: OwnerChoice;
  workers: number;
  pollIntervalMs: number;
  retry: { startMs: number; maxMs: number };
  /** The separate client for the writes. */
  client: { qps: number; burst: number };
}

/** Maps configuration and driver facts to the options. */
export function capacityOptions(config: Config, driver: DriverInfo): CapacityOptions {
  const labels = nodeLabels(driver.name, config.nodeName);
  return {
    desired: { driverName: driver.name, immediateBinding: config.capacityForImmediateBinding },
    nodeName: config.nodeName,
    namespace: config.namespace,
    segment: sortedSegment(driver.segment),
    labels,
    labelSelector: labelSelector(labels),
    owner: ownerChoice(config),
    workers: config.capacityThreads,
    pollIntervalMs: config.capacityPollIntervalMs,
    retry: { startMs: config.retryIntervalStartMs, maxMs: config.retryIntervalMaxMs },
    client: { qps: config.kubeApiCapacityQps, burst: config.kubeApiCapacityBurst },
  };
}

/** --capacity-owner-node wins over --capacity-ownerref-level. */
export function ownerChoice(config: Config): OwnerChoice {
  if (config.capacityOwnerNode) return { kind: "node", nodeName: config.nodeName };
  if (config.capacityOwnerrefLevel < 0) return { kind: "none" };
  return {
    kind: "pod",
    namespace: config.namespace,
    podName: config.podName,
    level: config.capacityOwnerrefLevel,
  };
}

/**
 * Why the driver cannot publish capacity, if it cannot. Upstream does not
 * check and then fails every GetCapacity, forever, with retries.
 */
export function capacityDriverProblem(driver: DriverInfo): string | undefined {
  if (driver.controllerCapabilities.has("GET_CAPACITY")) return undefined;
  return `--enable-capacity is set but CSI driver ${driver.name} does not report the GET_CAPACITY controller capability: it cannot report capacity. Remove --enable-capacity (and set storageCapacity: false in its CSIDriver object), or use a driver version that implements GetCapacity`;
}

/**
 * Why this node's CSIStorageCapacity objects could never be written, if they
 * could not: a topology segment (from the driver's NodeGetInfo, often the
 * node's name) that is no label, e.g. longer than 63 characters. Upstream
 * tries anyway and gets 422 on every create, forever, and never publishes;
 * here it is a start-up error (exit code 2) naming every problem.
 */
export function capacityLabelsProblem(config: Config, driver: DriverInfo): string | undefined {
  const problems = capacityLabelProblems(
    driver.segment,
    nodeLabels(driver.name, config.nodeName),
  );
  if (problems.length === 0) return undefined;
  return `--enable-capacity is set but this node's CSIStorageCapacity objects cannot be written (the API server would refuse every one with 422): ${
    problems.join("; ")
  }. Have the driver report a topology that is a label (NodeGetInfo accessible_topology), or remove --enable-capacity on this node`;
}

/** Start-up refusals of --enable-capacity that only the driver's answers reveal. */
export function refuseCapacityProblems(config: Config, driver: DriverInfo): void {
  if (!config.enableCapacity) return;
  const unfit = capacityDriverProblem(driver);
  if (unfit !== undefined) throw new FatalError(unfit);
  // Bad input, not a runtime failure: exit code 2, as for a bad flag.
  const labels = capacityLabelsProblem(config, driver);
  if (labels !== undefined) throw new FatalError(labels, { exitCode: 2 });
}

/**
 * Whether the Immediate binding race reads every node's CSIStorageCapacity
 * objects: only when this node publishes capacity for Immediate classes too,
 * as the other nodes then do.
 */
export function readsPublishedCapacity(config: Config): boolean {
  return config.enableCapacity && config.capacityForImmediateBinding &&
    config.nodeDeploymentImmediateBinding;
}

/** The message for an API server without storage.k8s.io/v1 CSIStorageCapacity. */
export const CAPACITY_API_MISSING =
  "--enable-capacity needs the storage.k8s.io/v1 CSIStorageCapacity API (Kubernetes 1.24 or newer), and the API server does not serve it: upgrade Kubernetes, or remove --enable-capacity";
