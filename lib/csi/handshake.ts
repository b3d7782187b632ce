/**
 * The start-up conversation with the driver, as upstream's main() in
 * cmd/csi-provisioner/csi-provisioner.go has it in node mode: wait for the
 * socket, Probe until ready, GetPluginInfo,
 * GetPluginCapabilities, ControllerGetCapabilities, NodeGetInfo.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { getuid } from "node:process";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../log/logger.ts";
import { FatalError } from "../runtime/fatal.ts";
import { sleep } from "../runtime/sleep.ts";
import type { CsiConnection } from "./connection.ts";
import { CsiError } from "./status.ts";
import type { ControllerCapabilityType, PluginServiceType, Segments } from "./types.ts";

/** What the driver told us about itself; fixed for the life of the process. */
export interface DriverInfo {
  name: string;
  vendorVersion: string;
  pluginCapabilities: ReadonlySet<PluginServiceType>;
  controllerCapabilities: ReadonlySet<ControllerCapabilityType>;
  nodeId: string;
  /** This node's topology segment from NodeGetInfo: the fixed local topology. */
  segment: Segments;
}

/** Options of the handshake. */
interface HandshakeOptions {
  logger: Logger;
  signal: AbortSignal;
  /** How often to log while waiting for the socket or the driver. */
  reportEveryMs?: number;
  probeIntervalMs?: number;
}

const DEFAULT_REPORT_MS = 5000;

function socketPath(target: string): string {
  return target.replace(/^unix:\/\//, "").replace(/^unix:/, "");
}

/** Waits until the socket file exists and the channel is READY, logging every few seconds. */
export async function connectToDriver(
  connection: CsiConnection,
  options: HandshakeOptions,
): Promise<void> {
  const path = socketPath(connection.target);
  const reportEvery = options.reportEveryMs ?? DEFAULT_REPORT_MS;
  let nextReport = 0;
  const report = (message: string) => {
    if (Date.now() < nextReport) return;
    nextReport = Date.now() + reportEvery;
    options.logger.notice({ address: connection.target }, message);
  };
  while (!options.signal.aborted) {
    const denied = await socketAccessProblem(path);
    if (denied !== undefined) throw new FatalError(denied, { exitCode: 2 });
    if (!(await stat(path).then((s) => s.isSocket(), () => false))) {
      report("Waiting for the CSI driver socket to appear");
      await sleep(250, options.signal);
      continue;
    }
    const state = connection.state(true);
    if (state === grpc.connectivityState.READY) return;
    report("Still connecting to the CSI driver");
    await connection.waitForStateChange(state, Date.now() + 1000);
  }
  throw new FatalError("Shut down while connecting to the CSI driver");
}

/**
 * What is wrong when this process may not reach the socket (EACCES, EPERM on
 * the socket or a directory above it): a configuration error no wait heals,
 * unlike a socket that is not there yet.
 */
async function socketAccessProblem(path: string): Promise<string | undefined> {
  try {
    await access(path, constants.W_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM") return undefined;
    return `the CSI driver socket ${path} is not accessible to uid ${getuid?.()} (${code}): ` +
      "run the agent as root (runAsUser: 0, as deploy/ does), or as a uid in a group that may " +
      "write the socket and search its directory (the driver must create it so)";
  }
}

/**
 * Probes every second until the driver is ready. DeadlineExceeded and
 * ready=false mean "not yet"; an absent ready field means ready; any other
 * error is fatal (csi-lib-utils ProbeForever).
 */
async function probeUntilReady(
  connection: CsiConnection,
  options: HandshakeOptions,
): Promise<void> {
  while (!options.signal.aborted) {
    options.logger.info("Probing CSI driver for readiness");
    try {
      const response = await connection.call("Probe", {}, { signal: options.signal });
      if (response.ready === null || response.ready.value) return;
      options.logger.warn("CSI driver is not ready");
    } catch (error) {
      if (!(error instanceof CsiError) || error.codeName !== "DeadlineExceeded") {
        throw new FatalError(`CSI driver probe failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      options.logger.warn("CSI driver probe timed out");
    }
    await sleep(options.probeIntervalMs ?? 1000, options.signal);
  }
  throw new FatalError("Shut down while waiting for the CSI driver to become ready");
}

/** Runs the whole start-up conversation and refuses drivers a node agent cannot work with. */
export async function handshake(
  connection: CsiConnection,
  options: HandshakeOptions,
): Promise<DriverInfo> {
  await connectToDriver(connection, options);
  await probeUntilReady(connection, options);
  const info = await fatalOnError("GetPluginInfo", () => connection.call("GetPluginInfo", {}));
  if (info.name === "") throw new FatalError("CSI driver name is empty (GetPluginInfo)");
  connection.setDriverName(info.name);
  const plugin = await fatalOnError(
    "GetPluginCapabilities",
    () => connection.call("GetPluginCapabilities", {}),
  );
  const controller = await fatalOnError(
    "ControllerGetCapabilities",
    () => connection.call("ControllerGetCapabilities", {}),
  );
  const node = await fatalOnError(
    "NodeGetInfo",
    () => connection.call("NodeGetInfo", {}),
    "Failed to get node info from CSI driver",
  );
  const driver: DriverInfo = {
    name: info.name,
    vendorVersion: info.vendor_version,
    pluginCapabilities: new Set(
      plugin.capabilities.flatMap((c) => c.service ? [c.service.type] : []),
    ),
    controllerCapabilities: new Set(
      controller.capabilities.flatMap((c) => c.rpc ? [c.rpc.type] : []),
    ),
    nodeId: node.node_id,
    segment: { ...node.accessible_topology?.segments },
  };
  refuseUnfitDriver(driver);
  return driver;
}

async function fatalOnError<T>(
  method: string,
  call: () => Promise<T>,
  prefix?: string,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const reason = (error as Error).message;
    throw new FatalError(`${prefix ?? `CSI driver ${method} failed`}: ${reason}`, { cause: error });
  }
}

/** The checks a node agent needs before it may touch any claim. */
function driverProblems(driver: DriverInfo): string[] {
  const problems: string[] = [];
  const prefix = `CSI driver ${driver.name} does not support dynamic provisioning`;
  if (!driver.pluginCapabilities.has("CONTROLLER_SERVICE")) {
    problems.push(`${prefix}: plugin CONTROLLER_SERVICE capability is not reported`);
  }
  if (!driver.controllerCapabilities.has("CREATE_DELETE_VOLUME")) {
    problems.push(`${prefix}: controller CREATE_DELETE_VOLUME capability is not reported`);
  }
  if (!driver.pluginCapabilities.has("VOLUME_ACCESSIBILITY_CONSTRAINTS")) {
    problems.push(
      `CSI driver ${driver.name} does not report the VOLUME_ACCESSIBILITY_CONSTRAINTS plugin capability: in node mode every volume must be tied to its node by topology`,
    );
  } else if (Object.keys(driver.segment).length === 0) {
    problems.push(
      `CSI driver ${driver.name} returned no accessible_topology in NodeGetInfo (node_id ${
        JSON.stringify(driver.nodeId)
      }): without a topology segment no volume can be tied to this node`,
    );
  }
  return problems;
}

function refuseUnfitDriver(driver: DriverInfo): void {
  const problems = driverProblems(driver);
  if (problems.length > 0) throw new FatalError(problems.join("; "));
}

/** The driver's facts as log fields. */
export function describeDriver(driver: DriverInfo): Record<string, unknown> {
  return {
    driver: driver.name,
    driverVersion: driver.vendorVersion,
    nodeId: driver.nodeId,
    segment: driver.segment,
    pluginCapabilities: [...driver.pluginCapabilities],
    controllerCapabilities: [...driver.controllerCapabilities],
  };
}
