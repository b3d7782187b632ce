/**
 * One CSI driver process per fake node, with its own socket, state directory
 * and log file: the upstream hostpath driver (hostpathplugin, built from its
 * vendored archive by peers.ts, run with the args of upstream's distributed
 * DaemonSet, see hostpath.ts), democratic-csi's local-hostpath driver
 * (democratic.ts, its volumes under the state directory), or the project's test driver
 * (tests/csi_driver, run through its command-line contract) for tests that
 * need its fault injection. Optionally a recording proxy (csi_recorder.ts)
 * sits between the node's agent and its driver.
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ControllerCapabilityType, PluginServiceType } from "../../lib/csi/types.ts";
import type { VolumeIds } from "../csi_driver/config.ts";
import type { LogLevel } from "../csi_driver/flags.ts";
import { driverArgs } from "../csi_driver/spawn.ts";
import { CsiRecorder } from "./csi_recorder.ts";
import { democraticArgs, democraticConfig } from "./democratic.ts";
import { hostpathArgs } from "./hostpath.ts";
import { type ManagedProcess, type ProcessGroup, tailFile } from "./process.ts";
import { TEST_DRIVER_NAME, TEST_TOPOLOGY_KEY } from "./nodes.ts";
import { waitFor } from "./wait.ts";

export type DriverKind = "test" | "hostpath" | "democratic" | "none";

/** Pool name → size, e.g. { fast: "10Gi", slow: "1Gi" }. */
export type CapacityMap = Record<string, string>;

export interface DriverOptions {
  /**
   * Per node; a function gets the node name and its index. Default { fast: "10Gi" }.
   * democratic-csi has no pools: it reports the free space of its filesystem.
   */
  capacity?: CapacityMap | ((node: string, index: number) => CapacityMap);
  /**
   * Put a recording proxy in front of each node's driver (csi_recorder.ts), so
   * that `node.calls()` shows what the agent sent. The test driver records
   * its calls itself. Default false.
   */
  recordCalls?: boolean;
  /** Test driver only. Default: the driver's own (CREATE_DELETE_VOLUME, GET_CAPACITY). */
  controllerCapabilities?: ControllerCapabilityType[];
  /** Test driver only. Default: the driver's own (CONTROLLER_SERVICE, VOLUME_ACCESSIBILITY_CONSTRAINTS). */
  pluginCapabilities?: PluginServiceType[];
  /** Test driver only: its log level; default "info". */
  logLevel?: LogLevel;
  /** Test driver only: volume IDs random (default) or made from the volume name. */
  volumeIds?: VolumeIds;
  /** hostpath only: its `--v`; default 4 (see HOSTPATH_VERBOSITY). */
  verbosity?: number;
  /**
   * Appended to the driver's command line; for hostpath e.g. `--enable-attach`
   * (PUBLISH_UNPUBLISH_VOLUME), `--enable-controller-modify-volume` (MODIFY_VOLUME).
   */
  extraArgs?: string[];
}

export interface NodeDriverPaths {
  /** unix:///.../csi.sock, as agents take it in --csi-address (the proxy's, when recording). */
  csiEndpoint: string;
  csiSocket: string;
  /** The socket the driver itself listens on: csiSocket, or driver.sock behind a proxy. */
  driverSocket: string;
  /** unix:///.../control.sock: the test driver's control API. */
  controlEndpoint: string;
  controlSocket: string;
  stateDir: string;
}

export const REPO_ROOT: string = fileURLToPath(new URL("../../", import.meta.url));
const TEST_DRIVER_MAIN = join(REPO_ROOT, "tests", "csi_driver", "main.ts");

/** Linux limits unix socket paths to 107 bytes. */
const MAX_SOCKET_PATH = 107;

export function nodeDriverPaths(
  nodeDir: string,
  options: { recorded?: boolean } = {},
): NodeDriverPaths {
  const csiSocket = join(nodeDir, "csi.sock");
  const controlSocket = join(nodeDir, "control.sock");
  if (controlSocket.length > MAX_SOCKET_PATH) {
    throw new Error(
      `socket path too long for Linux (${controlSocket.length} bytes): ${controlSocket}`,
    );
  }
  return {
    csiSocket,
    csiEndpoint: `unix://${csiSocket}`,
    driverSocket: options.recorded ? join(nodeDir, "driver.sock") : csiSocket,
    controlSocket,
    controlEndpoint: `unix://${controlSocket}`,
    stateDir: join(nodeDir, "state"),
  };
}

export function capacityFor(options: DriverOptions, node: string, index: number): CapacityMap {
  const capacity = options.capacity;
  if (capacity === undefined) return { fast: "10Gi" };
  return typeof capacity === "function" ? capacity(node, index) : capacity;
}

/** The command line of tests/csi_driver/main.ts, built by the driver's own driverArgs(). */
export function testDriverArgs(
  node: string,
  paths: NodeDriverPaths,
  options: { capacity: CapacityMap; driver: DriverOptions },
): string[] {
  const { driver } = options;
  const args = driverArgs({
    endpoint: `unix://${paths.driverSocket}`,
    controlEndpoint: paths.controlEndpoint,
    nodeId: node,
    pools: Object.entries(options.capacity).map(([kind, size]) => ({ kind, size })),
    driverName: TEST_DRIVER_NAME,
    topologyKey: TEST_TOPOLOGY_KEY,
    stateDir: paths.stateDir,
    ...(driver.controllerCapabilities
      ? { controllerCapabilities: driver.controllerCapabilities }
      : {}),
    ...(driver.pluginCapabilities ? { pluginCapabilities: driver.pluginCapabilities } : {}),
    ...(driver.logLevel ? { logLevel: driver.logLevel } : {}),
    ...(driver.volumeIds ? { volumeIds: driver.volumeIds } : {}),
  });
  return ["run", "-A", TEST_DRIVER_MAIN, ...args, ...(driver.extraArgs ?? [])];
}

/** Whether something accepts connections on the unix socket. */
async function socketAccepts(path: string): Promise<boolean> {
  try {
    const connection = await Deno.connect({ transport: "unix", path });
    connection.close();
    return true;
  } catch {
    return false;
  }
}

export interface StartDriverOptions {
  group: ProcessGroup;
  kind: DriverKind;
  node: string;
  index: number;
  paths: NodeDriverPaths;
  logFile: string;
  driver: DriverOptions;
  /** The hostpathplugin binary (peers.ts), for kind "hostpath". */
  hostpathBinary?: string;
  /** bin/democratic-csi (democratic_install.ts), for kind "democratic". */
  democraticBin?: string;
  signal?: AbortSignal;
}

/** What the test driver cannot be told on its command line when it is hostpath or democratic. */
function refuseTestDriverOptions(kind: DriverKind, driver: DriverOptions): void {
  const keys = ["controllerCapabilities", "pluginCapabilities", "logLevel", "volumeIds"] as const;
  const given = [...keys, ...(kind === "democratic" ? ["verbosity"] as const : [])]
    .filter((key) => driver[key] !== undefined);
  if (given.length > 0) {
    throw new Error(
      `driverOptions ${given.join(", ")} are not the ${kind} driver's; its ` +
        `capabilities come from its flags (extraArgs, e.g. --enable-attach for hostpath)`,
    );
  }
}

interface DriverCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** democratic-csi with its config file in the node's directory and its volumes in the state dir. */
async function democraticCommand(options: StartDriverOptions): Promise<DriverCommand> {
  if (!options.democraticBin) throw new Error("the democratic driver needs democraticBin");
  refuseTestDriverOptions("democratic", options.driver);
  const configFile = join(options.paths.stateDir, "..", "democratic.yaml");
  await Deno.mkdir(options.paths.stateDir, { recursive: true });
  await Deno.writeTextFile(configFile, democraticConfig(options.paths.stateDir));
  return {
    command: options.democraticBin,
    args: democraticArgs({
      configFile,
      socket: options.paths.driverSocket,
      ...(options.driver.extraArgs ? { extraArgs: options.driver.extraArgs } : {}),
    }),
    env: { CSI_NODE_ID: options.node },
  };
}

/** The process to spawn for the node's driver. */
async function driverCommand(options: StartDriverOptions): Promise<DriverCommand> {
  const { paths, node, driver } = options;
  const capacity = capacityFor(driver, node, options.index);
  if (options.kind === "test") {
    return { command: Deno.execPath(), args: testDriverArgs(node, paths, { capacity, driver }) };
  }
  if (options.kind === "democratic") return await democraticCommand(options);
  if (options.kind !== "hostpath") throw new Error(`no driver of kind "${options.kind}"`);
  if (!options.hostpathBinary) throw new Error("the hostpath driver needs hostpathBinary");
  refuseTestDriverOptions("hostpath", driver);
  return {
    command: options.hostpathBinary,
    args: hostpathArgs({
      endpoint: `unix://${paths.driverSocket}`,
      node,
      stateDir: paths.stateDir,
      capacity,
      ...(driver.verbosity === undefined ? {} : { verbosity: driver.verbosity }),
      ...(driver.extraArgs ? { extraArgs: driver.extraArgs } : {}),
    }),
  };
}

/** Starts the node's driver and waits until its sockets accept connections. */
export async function startNodeDriver(options: StartDriverOptions): Promise<ManagedProcess> {
  const { paths, node } = options;
  const { command, args, env } = await driverCommand(options);
  await Deno.mkdir(paths.stateDir, { recursive: true });
  const process = options.group.spawn({
    name: `csi-driver ${node}`,
    command,
    args,
    logFile: options.logFile,
    cwd: REPO_ROOT,
    env: { NO_COLOR: "1", ...env },
  });
  const sockets = options.kind === "test"
    ? [paths.driverSocket, paths.controlSocket]
    : [paths.driverSocket];
  const outcome = await waitFor(async () => {
    if (!process.running) return "exited";
    for (const socket of sockets) if (!await socketAccepts(socket)) return false;
    return true;
  }, {
    description: `the CSI driver of ${node} to listen on ${paths.driverSocket}`,
    timeoutMs: 60_000,
    ...(options.signal ? { signal: options.signal } : {}),
  }).catch(async (error) => {
    await process.stop({ graceMs: 1_000 });
    throw new Error(`${error.message}\n${await tailFile(options.logFile, 30)}`);
  });
  if (outcome === "exited") {
    throw new Error(
      `the CSI driver of ${node} exited (code ${process.status?.code}) before listening; ` +
        `log ${options.logFile}:\n${await tailFile(options.logFile, 30)}`,
    );
  }
  return process;
}

/** Starts a recording proxy on the node's csiSocket in front of its driverSocket. */
export async function startRecorder(paths: NodeDriverPaths): Promise<CsiRecorder> {
  return await CsiRecorder.start({ listen: paths.csiSocket, target: paths.driverSocket });
}
