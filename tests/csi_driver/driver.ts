/**
 * Starts the test driver in this process: the CSI gRPC server on its unix
 * socket, plus the control endpoint when one is configured. The standalone
 * command (main.ts) runs the same thing.
 */
import type { Server } from "@grpc/grpc-js";
import { type Logger, pino } from "pino";
import { CallLog } from "./call_log.ts";
import { type DriverConfig, type DriverOptions, resolveDriverConfig } from "./config.ts";
import { inProcessControl } from "./control_api.ts";
import { controlApp } from "./control_app.ts";
import { type ControlServer, serveOnSocket } from "./control_server.ts";
import { csiHandlers } from "./csi_handlers.ts";
import { grpcTarget, prepareSocketPath, removeSocketFile } from "./endpoint.ts";
import { FaultTable } from "./faults.ts";
import { bindCsiServer, createCsiServer, shutdownCsiServer } from "./grpc_server.ts";
import { loadVolumes, saveVolumes } from "./state_file.ts";
import type { DriverControlApi } from "./types.ts";
import { VolumeStore } from "./volume_store.ts";

export interface TestDriver {
  /** gRPC target of the CSI socket, "unix:///abs/path". */
  endpoint: string;
  socketPath: string;
  /** "unix:///abs/path" of the control socket, or null when none was asked for. */
  controlEndpoint: string | null;
  /** Steers the driver directly, without the control socket. */
  control: DriverControlApi;
  config: DriverConfig;
  /** Ends pending calls with UNAVAILABLE, closes both sockets and removes their files. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Where the per-RPC log lines go; default: nowhere. */
  logger?: Logger;
  /** How long stop() lets answered calls drain before cutting connections; default 1 s. */
  shutdownGraceMs?: number;
}

/** Checks the options, then starts a driver; throws listing every problem with them. */
export function startTestDriver(
  options: DriverOptions,
  start: StartOptions = {},
): Promise<TestDriver> {
  const resolved = resolveDriverConfig(options);
  if (!resolved.ok) {
    return Promise.reject(
      new Error(`invalid test driver options: ${resolved.problems.join("; ")}`),
    );
  }
  return startDriver(resolved.config, start);
}

/** Starts a driver from a checked configuration. */
export async function startDriver(
  config: DriverConfig,
  start: StartOptions = {},
): Promise<TestDriver> {
  const logger = start.logger ?? pino({ level: "silent" });
  const volumes = config.stateDir === null ? [] : loadVolumes(config.stateDir);
  const store = new VolumeStore(config.pools, volumes);
  warnAboutOrphans(store, config, logger);
  const core = {
    store,
    faults: new FaultTable(),
    calls: new CallLog({ limit: config.callLogLimit }),
  };
  const stopping = new AbortController();
  const persist = () => {
    if (config.stateDir !== null) saveVolumes(config.stateDir, store.volumes(), config.nodeId);
  };
  const server = createCsiServer({
    handlers: csiHandlers({ config, store, persist }),
    faults: core.faults,
    calls: core.calls,
    logger,
    stopping: stopping.signal,
    cutConnections: () => server.drain(grpcTarget(config.socketPath), 0),
  });
  const control = inProcessControl(core);
  const controlServer = await listen(config, { server, control });
  logger.info({
    socket: config.socketPath,
    control: config.controlSocketPath,
    volumes: volumes.length,
  }, "ready");
  let stopped: Promise<void> | null = null;
  const stop = () => {
    stopped ??= (async () => {
      stopping.abort();
      await shutdownCsiServer(server, start.shutdownGraceMs ?? 1000);
      await controlServer?.close();
      removeSocketFile(config.socketPath);
      if (config.controlSocketPath !== null) removeSocketFile(config.controlSocketPath);
      logger.info("stopped");
    })();
    return stopped;
  };
  const controlEndpoint = config.controlSocketPath === null
    ? null
    : grpcTarget(config.controlSocketPath);
  return {
    endpoint: grpcTarget(config.socketPath),
    socketPath: config.socketPath,
    controlEndpoint,
    control,
    config,
    stop,
  };
}

/** Binds the CSI socket, then the control socket if any; on failure leaves neither behind. */
async function listen(
  config: DriverConfig,
  parts: { server: Server; control: DriverControlApi },
): Promise<ControlServer | null> {
  prepareSocketPath(config.socketPath);
  await bindCsiServer(parts.server, config.socketPath);
  if (config.controlSocketPath === null) return null;
  try {
    prepareSocketPath(config.controlSocketPath);
    return await serveOnSocket(config.controlSocketPath, controlApp(parts.control).fetch);
  } catch (error: unknown) {
    parts.server.forceShutdown();
    removeSocketFile(config.socketPath);
    throw error;
  }
}

/** Volumes reloaded for a kind no flag defines still exist, but count against nothing. */
function warnAboutOrphans(store: VolumeStore, config: DriverConfig, logger: Logger): void {
  const kinds = new Set(config.pools.map((pool) => pool.kind));
  for (const volume of store.volumes()) {
    if (!kinds.has(volume.kind)) {
      logger.warn(
        { volume: volume.name, kind: volume.kind },
        "reloaded volume's pool is not configured",
      );
    }
  }
}
