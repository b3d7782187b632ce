/**
 * One CSI driver process per fake node, with its own socket, state directory
 * and log file. The driver is the project's test driver (tests/csi_driver),
 * run through its command-line contract. The upstream hostpath plugin is
 * accepted as a choice but cannot be built: its module is blocked at the Go
 * module proxy (see README.md), and it is not replaced by an imitation.
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ControllerCapabilityType, PluginServiceType } from "../../lib/csi/types.ts";
import type { LogLevel } from "../csi_driver/flags.ts";
import { driverArgs } from "../csi_driver/spawn.ts";
import { type ManagedProcess, type ProcessGroup, tailFile } from "./process.ts";
import { TEST_DRIVER_NAME, TEST_TOPOLOGY_KEY } from "./nodes.ts";
import { waitFor } from "./wait.ts";

export type DriverKind = "test" | "hostpath" | "none";

/** Pool name → size, e.g. { fast: "10Gi", slow: "1Gi" }. */
export type CapacityMap = Record<string, string>;

export interface DriverOptions {
  /** Per node; a function gets the node name and its index. Default { fast: "10Gi" }. */
  capacity?: CapacityMap | ((node: string, index: number) => CapacityMap);
  /** Default: the driver's own (CREATE_DELETE_VOLUME, GET_CAPACITY). */
  controllerCapabilities?: ControllerCapabilityType[];
  /** Default: the driver's own (CONTROLLER_SERVICE, VOLUME_ACCESSIBILITY_CONSTRAINTS). */
  pluginCapabilities?: PluginServiceType[];
  /** The driver's log level; default "info". */
  logLevel?: LogLevel;
  /** Appended to the driver's command line. */
  extraArgs?: string[];
}

export interface NodeDriverPaths {
  /** unix:///.../csi.sock, as agents take it in --csi-address. */
  csiEndpoint: string;
  csiSocket: string;
  /** unix:///.../control.sock: the test driver's control API. */
  controlEndpoint: string;
  controlSocket: string;
  stateDir: string;
}

export const REPO_ROOT: string = fileURLToPath(new URL("../../", import.meta.url));
const TEST_DRIVER_MAIN = join(REPO_ROOT, "tests", "csi_driver", "main.ts");
const HOSTPATH_MODULE = "github.com/kubernetes-csi/csi-driver-host-path";

/** Linux limits unix socket paths to 107 bytes. */
const MAX_SOCKET_PATH = 107;

export const HOSTPATH_BLOCKED_MESSAGE =
  `the upstream hostpath CSI driver cannot be built: the Go module proxy refuses every version ` +
  `of ${HOSTPATH_MODULE}. Reproduce with \`cd tests/cluster/tools && go list -m -versions ` +
  `${HOSTPATH_MODULE}\` → "403 Forbidden ... This module version is not available." ` +
  `Use driver "test" (the project's test CSI driver) instead; see tests/cluster/README.md.`;

export function nodeDriverPaths(nodeDir: string): NodeDriverPaths {
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
    endpoint: paths.csiEndpoint,
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
  signal?: AbortSignal;
}

/** Starts the node's driver and waits until both of its sockets accept connections. */
export async function startNodeDriver(options: StartDriverOptions): Promise<ManagedProcess> {
  if (options.kind === "hostpath") throw new Error(HOSTPATH_BLOCKED_MESSAGE);
  if (options.kind !== "test") throw new Error(`no driver of kind "${options.kind}"`);
  const { paths, node } = options;
  await Deno.mkdir(paths.stateDir, { recursive: true });
  const capacity = capacityFor(options.driver, node, options.index);
  const process = options.group.spawn({
    name: `csi-driver ${node}`,
    command: Deno.execPath(),
    args: testDriverArgs(node, paths, { capacity, driver: options.driver }),
    logFile: options.logFile,
    cwd: REPO_ROOT,
    env: { NO_COLOR: "1" },
  });
  const outcome = await waitFor(async () => {
    if (!process.running) return "exited";
    return await socketAccepts(paths.csiSocket) && await socketAccepts(paths.controlSocket);
  }, {
    description: `the CSI driver of ${node} to listen on ${paths.csiSocket}`,
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
