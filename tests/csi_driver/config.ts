/**
 * The driver's configuration, shared by the command line and by
 * startTestDriver, and the checks both go through.
 */
import type { ControllerCapabilityType, PluginServiceType } from "../../lib/csi/types.ts";
import { DEFAULT_CALL_LOG_LIMIT } from "./call_log.ts";
import { socketPathOf } from "./endpoint.ts";
import { toBytes } from "./quantity.ts";
import type { PoolSpec } from "./volume_store.ts";

export interface DriverConfig {
  /** Absolute path of the CSI socket. */
  socketPath: string;
  /** Absolute path of the control socket; null for none. */
  controlSocketPath: string | null;
  nodeId: string;
  driverName: string;
  vendorVersion: string;
  topologyKey: string;
  /** In flag order: CreateVolume without a kind takes the first with room. */
  pools: PoolSpec[];
  /** Where volumes.json lives; null keeps volumes in memory only. */
  stateDir: string | null;
  controllerCapabilities: ControllerCapabilityType[];
  pluginCapabilities: PluginServiceType[];
  callLogLimit: number;
  volumeIds: VolumeIds;
}

/**
 * How volume IDs are made: "random" (a UUID, as the hostpath driver) or
 * "name" (the volume name itself, as democratic-csi and most LVM, ZFS and
 * directory drivers: the same name gets the same ID on every node).
 */
export type VolumeIds = "random" | "name";
export const VOLUME_IDS: readonly VolumeIds[] = ["random", "name"];

/** A pool as callers write it: sizes in bytes or as quantities ("10Gi"). */
export interface PoolOption {
  kind: string;
  size: number | string;
  maxVolumeSize?: number | string;
}

/** What startTestDriver accepts; everything but endpoint, nodeId and pools has a default. */
export interface DriverOptions {
  /** "unix:///path/csi.sock" or a bare path. */
  endpoint: string;
  nodeId: string;
  pools: PoolOption[];
  controlEndpoint?: string;
  driverName?: string;
  vendorVersion?: string;
  topologyKey?: string;
  stateDir?: string;
  controllerCapabilities?: ControllerCapabilityType[];
  pluginCapabilities?: PluginServiceType[];
  callLogLimit?: number;
  /** Default "random". */
  volumeIds?: VolumeIds;
}

export const DEFAULT_DRIVER_NAME = "test.csi.k8s.io";
export const DEFAULT_TOPOLOGY_KEY = "topology.test.csi.k8s.io/node";
export const DEFAULT_VENDOR_VERSION = "0.0.0-test";
export const DEFAULT_CONTROLLER_CAPABILITIES: ControllerCapabilityType[] = [
  "CREATE_DELETE_VOLUME",
  "GET_CAPACITY",
];
export const DEFAULT_PLUGIN_CAPABILITIES: PluginServiceType[] = [
  "CONTROLLER_SERVICE",
  "VOLUME_ACCESSIBILITY_CONSTRAINTS",
];

export const CONTROLLER_CAPABILITIES: readonly ControllerCapabilityType[] = [
  "CREATE_DELETE_VOLUME",
  "PUBLISH_UNPUBLISH_VOLUME",
  "LIST_VOLUMES",
  "GET_CAPACITY",
  "CREATE_DELETE_SNAPSHOT",
  "LIST_SNAPSHOTS",
  "CLONE_VOLUME",
  "PUBLISH_READONLY",
  "EXPAND_VOLUME",
  "LIST_VOLUMES_PUBLISHED_NODES",
  "VOLUME_CONDITION",
  "GET_VOLUME",
  "SINGLE_NODE_MULTI_WRITER",
  "MODIFY_VOLUME",
];

export const PLUGIN_CAPABILITIES: readonly PluginServiceType[] = [
  "CONTROLLER_SERVICE",
  "VOLUME_ACCESSIBILITY_CONSTRAINTS",
  "GROUP_CONTROLLER_SERVICE",
  "SNAPSHOT_METADATA_SERVICE",
];

export type ConfigOutcome = { ok: true; config: DriverConfig } | { ok: false; problems: string[] };

/** Checks options and fills in defaults, listing every problem at once. */
export function resolveDriverConfig(options: DriverOptions): ConfigOutcome {
  const problems: string[] = [];
  const socket = options.endpoint === ""
    ? { ok: false as const, problem: "an endpoint is required (--endpoint)" }
    : socketPathOf(options.endpoint);
  if (!socket.ok) problems.push(socket.problem);
  let controlSocketPath: string | null = null;
  if (options.controlEndpoint !== undefined) {
    const control = socketPathOf(options.controlEndpoint);
    if (!control.ok) problems.push(control.problem);
    else controlSocketPath = control.path;
    if (socket.ok && control.ok && socket.path === control.path) {
      problems.push("the control endpoint must differ from the CSI endpoint");
    }
  }
  if (options.nodeId.trim() === "") problems.push("a node id is required (--node-id)");
  const pools = resolvePools(options.pools, problems);
  const limit = options.callLogLimit ?? DEFAULT_CALL_LOG_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    problems.push(`call log limit ${limit} is not a whole number >= 1`);
  }
  const controllerCapabilities = options.controllerCapabilities ?? DEFAULT_CONTROLLER_CAPABILITIES;
  const pluginCapabilities = options.pluginCapabilities ?? DEFAULT_PLUGIN_CAPABILITIES;
  checkNames("controller capability", controllerCapabilities, CONTROLLER_CAPABILITIES, problems);
  checkNames("plugin capability", pluginCapabilities, PLUGIN_CAPABILITIES, problems);
  const volumeIds = options.volumeIds ?? "random";
  if (!VOLUME_IDS.includes(volumeIds)) {
    problems.push(`volume IDs "${volumeIds}" must be one of ${VOLUME_IDS.join(", ")}`);
  }
  if (problems.length > 0 || !socket.ok) return { ok: false, problems };
  return {
    ok: true,
    config: {
      socketPath: socket.path,
      controlSocketPath,
      nodeId: options.nodeId,
      driverName: options.driverName ?? DEFAULT_DRIVER_NAME,
      vendorVersion: options.vendorVersion ?? DEFAULT_VENDOR_VERSION,
      topologyKey: options.topologyKey ?? DEFAULT_TOPOLOGY_KEY,
      pools,
      stateDir: options.stateDir ?? null,
      controllerCapabilities: [...controllerCapabilities],
      pluginCapabilities: [...pluginCapabilities],
      callLogLimit: limit,
      volumeIds,
    },
  };
}

function resolvePools(options: readonly PoolOption[], problems: string[]): PoolSpec[] {
  if (options.length === 0) problems.push("at least one pool is required (--capacity KIND=SIZE)");
  const pools: PoolSpec[] = [];
  for (const option of options) {
    if (option.kind === "") problems.push("a pool kind must not be empty");
    if (pools.some((pool) => pool.kind === option.kind)) {
      problems.push(`pool "${option.kind}" is given more than once`);
      continue;
    }
    const sizeBytes = bytesOrProblem(option.size, `pool "${option.kind}"`, problems);
    const maxVolumeSizeBytes = option.maxVolumeSize === undefined
      ? null
      : bytesOrProblem(option.maxVolumeSize, `max volume size of pool "${option.kind}"`, problems);
    pools.push({ kind: option.kind, sizeBytes, maxVolumeSizeBytes });
  }
  return pools;
}

function bytesOrProblem(size: number | string, what: string, problems: string[]): number {
  try {
    return toBytes(size);
  } catch (error: unknown) {
    problems.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    return 0;
  }
}

function checkNames(
  what: string,
  given: readonly string[],
  known: readonly string[],
  problems: string[],
): void {
  for (const name of given) {
    if (!known.includes(name)) {
      problems.push(`unknown ${what} "${name}" (known: ${known.join(", ")})`);
    }
  }
}
