/**
 * One gRPC channel to the CSI driver's unix socket, shared by the Identity,
 * Controller and Node clients. Every call has a deadline (--timeout), is
 * logged at debug with secrets stripped, and is timed for
 * csi_sidecar_operations_seconds.
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../log/logger.ts";
import { AbortFanout, type Unsubscribe } from "../queue/abort_fanout.ts";
import { loadCsiServices } from "./proto.ts";
import { sanitizeCsiMessage } from "./sanitize.ts";
import { CsiError, grpcCodeName, toCsiError } from "./status.ts";
import type {
  ControllerExpandVolumeRequest,
  ControllerExpandVolumeResponse,
  ControllerGetVolumeRequest,
  ControllerGetVolumeResponse,
  ControllerServiceCapability,
  CreateVolumeRequest,
  CreateVolumeResponse,
  DeleteVolumeRequest,
  GetCapacityRequest,
  GetCapacityResponse,
  GetPluginInfoResponse,
  ListVolumesRequest,
  ListVolumesResponse,
  NodeGetInfoResponse,
  PluginCapability,
  ProbeResponse,
} from "./types.ts";

type Empty = Record<string, never>;

/** Request and response of each CSI method the agent calls. */
export interface CsiMethodTypes {
  Probe: { request: Empty; response: ProbeResponse };
  GetPluginInfo: { request: Empty; response: GetPluginInfoResponse };
  GetPluginCapabilities: { request: Empty; response: { capabilities: PluginCapability[] } };
  ControllerGetCapabilities: {
    request: Empty;
    response: { capabilities: ControllerServiceCapability[] };
  };
  CreateVolume: { request: CreateVolumeRequest; response: CreateVolumeResponse };
  DeleteVolume: { request: DeleteVolumeRequest; response: Empty };
  GetCapacity: { request: GetCapacityRequest; response: GetCapacityResponse };
  ListVolumes: { request: ListVolumesRequest; response: ListVolumesResponse };
  ControllerGetVolume: {
    request: ControllerGetVolumeRequest;
    response: ControllerGetVolumeResponse;
  };
  ControllerExpandVolume: {
    request: ControllerExpandVolumeRequest;
    response: ControllerExpandVolumeResponse;
  };
  NodeGetInfo: { request: Empty; response: NodeGetInfoResponse };
}

/** A CSI method name. */
export type CsiMethod = keyof CsiMethodTypes;

const SERVICE_OF: Record<CsiMethod, "Identity" | "Controller" | "Node"> = {
  Probe: "Identity",
  GetPluginInfo: "Identity",
  GetPluginCapabilities: "Identity",
  ControllerGetCapabilities: "Controller",
  CreateVolume: "Controller",
  DeleteVolume: "Controller",
  GetCapacity: "Controller",
  ListVolumes: "Controller",
  ControllerGetVolume: "Controller",
  ControllerExpandVolume: "Controller",
  NodeGetInfo: "Node",
};

/** Full gRPC path of a method, the `method_name` label upstream uses. */
function methodPath(method: CsiMethod): string {
  return `/csi.v1.${SERVICE_OF[method]}/${method}`;
}

/** Receives the outcome of every CSI call (for csi_sidecar_operations_seconds). */
export interface CsiCallObserver {
  observe(call: { driverName: string; method: string; code: string; seconds: number }): void;
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the connection's default deadline. */
  timeoutMs?: number;
}

/** Calls one CSI method; the narrow view most modules need. */
export interface CsiCaller {
  call<M extends CsiMethod>(
    method: M,
    request: CsiMethodTypes[M]["request"],
    options?: CallOptions,
  ): Promise<CsiMethodTypes[M]["response"]>;
}

/** The connection, as main.ts and the start-up handshake see it. */
export interface CsiConnection extends CsiCaller {
  readonly target: string;
  /** Sets the driver_name metric label once GetPluginInfo answered. */
  setDriverName(name: string): void;
  /** The channel's state; tryToConnect starts connecting an idle channel. */
  state(tryToConnect: boolean): grpc.connectivityState;
  /** Resolves when the state changes from `current` or the deadline passes (false then). */
  waitForStateChange(current: grpc.connectivityState, deadline: number): Promise<boolean>;
  /** Number of calls in flight. */
  inFlight(): number;
  /** Resolves true when no call is in flight, false when the deadline passes first. */
  drained(deadline: number): Promise<boolean>;
  close(): void;
}

/** Normalizes --csi-address: a plain path becomes unix://path, as upstream does. */
export function csiTarget(address: string): string {
  if (address.startsWith("unix://") || address.startsWith("unix:")) return address;
  return `unix://${address}`;
}

/** Opens the channel (lazily: nothing connects until the first call or state(true)). */
export function openCsiConnection(
  address: string,
  options: { timeoutMs: number; logger: Logger; observer?: CsiCallObserver },
): CsiConnection {
  const target = csiTarget(address);
  const channel = new grpc.Channel(target, grpc.credentials.createInsecure(), {
    // The agent must notice a lost driver, not an idle channel: never go idle on our own.
    "grpc.client_idle_timeout_ms": 2147483647,
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
  });
  const services = loadCsiServices();
  const clients = {
    Identity: new services.Identity(target, grpc.credentials.createInsecure(), {
      channelOverride: channel,
    }),
    Controller: new services.Controller(target, grpc.credentials.createInsecure(), {
      channelOverride: channel,
    }),
    Node: new services.Node(target, grpc.credentials.createInsecure(), {
      channelOverride: channel,
    }),
  };
  const tracker = new InFlightTracker();
  let driverName = "unknown-driver";
  const invoke = createInvoker({
    clients,
    tracker,
    aborts: new AbortFanout(),
    ...options,
    driverName: () => driverName,
  });
  return {
    target,
    call: invoke,
    setDriverName: (name) => {
      driverName = name;
    },
    state: (tryToConnect) => channel.getConnectivityState(tryToConnect),
    waitForStateChange: (current, deadline) =>
      new Promise((resolve) => {
        channel.watchConnectivityState(current, deadline, (error) => resolve(error === undefined));
      }),
    inFlight: () => tracker.count,
    drained: (deadline) => tracker.drained(deadline),
    close: () => {
      for (const client of Object.values(clients)) client.close();
      channel.close();
    },
  };
}

class InFlightTracker {
  count = 0;
  #waiters: (() => void)[] = [];

  enter(): void {
    this.count++;
  }

  leave(): void {
    this.count--;
    if (this.count === 0) { for (const wake of this.#waiters.splice(0)) wake(); }
  }

  drained(deadline: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

type UnaryClient = Record<
  string,
  (
    request: unknown,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, response?: unknown) => void,
  ) => grpc.ClientUnaryCall
>;

function createInvoker(deps: {
  clients: Record<"Identity" | "Controller" | "Node", grpc.Client>;
  tracker: InFlightTracker;
  aborts: AbortFanout;
  timeoutMs: number;
  logger: Logger;
  observer?: CsiCallObserver;
  driverName: () => string;
}): CsiCaller["call"] {
  return <M extends CsiMethod>(
    method: M,
    request: CsiMethodTypes[M]["request"],
    options: CallOptions = {},
  ): Promise<CsiMethodTypes[M]["response"]> => {
    const path = methodPath(method);
    const client = deps.clients[SERVICE_OF[method]] as unknown as UnaryClient;
    const started = performance.now();
    const log = deps.logger;
    // The sanitized copies are deep copies: made only for a line that is written.
    const debug = log.isLevelEnabled("debug");
    if (debug) log.debug({ method: path, request: sanitizeCsiMessage(request) }, "CSI call");
    deps.tracker.enter();
    return new Promise<CsiMethodTypes[M]["response"]>((resolve, reject) => {
      const finish = (code: number, error: CsiError | undefined, response?: unknown) => {
        const seconds = (performance.now() - started) / 1000;
        deps.observer?.observe({
          driverName: deps.driverName(),
          method: path,
          code: grpcCodeName(code),
          seconds,
        });
        if (debug) logOutcome(log, { path, error, response, seconds });
        deps.tracker.leave();
        if (error === undefined) resolve(response as CsiMethodTypes[M]["response"]);
        else reject(error);
      };
      const deadline = Date.now() + (options.timeoutMs ?? deps.timeoutMs);
      let unsubscribe: Unsubscribe | undefined;
      const call = client[method]?.(
        request,
        new grpc.Metadata(),
        { deadline },
        (failure, response) => {
          unsubscribe?.();
          if (failure === null) finish(0, undefined, response);
          else {
            const error = toCsiError(path, failure);
            finish(error.code, error);
          }
        },
      );
      // Every call of a worker carries the pool's one shutdown signal: one listener on it for all.
      if (options.signal) unsubscribe = deps.aborts.subscribe(options.signal, () => call?.cancel());
    });
  };
}

/** The debug line of a finished call, its response sanitized. */
function logOutcome(
  log: Logger,
  outcome: { path: string; error: CsiError | undefined; response: unknown; seconds: number },
): void {
  const { path: method, error, seconds } = outcome;
  if (error === undefined) {
    log.debug({ method, response: sanitizeCsiMessage(outcome.response), seconds }, "CSI response");
  } else {
    log.debug({ method, code: error.codeName, error: error.details, seconds }, "CSI error");
  }
}
