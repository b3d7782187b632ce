/**
 * A promise-based CSI client over grpc-js for tests of the test driver (and
 * of anything else that speaks CSI on a unix socket).
 */
import * as grpc from "@grpc/grpc-js";
import { loadCsiServices } from "../../lib/csi/proto.ts";
import type { CsiMethod } from "./types.ts";

export interface CallOptions {
  /** Default 10 s. */
  deadlineMs?: number;
  /** Cancels the call. */
  signal?: AbortSignal;
}

export interface CsiTestClient {
  /** Resolves with the response, rejects with the grpc-js ServiceError. */
  call<T = Record<string, unknown>>(
    method: CsiMethod,
    request?: object,
    options?: CallOptions,
  ): Promise<T>;
  /** Resolves with the error of a call expected to fail; rejects if it succeeds. */
  fail(method: CsiMethod, request?: object, options?: CallOptions): Promise<grpc.ServiceError>;
  close(): void;
}

const SERVICE_OF: Record<CsiMethod, "Identity" | "Controller" | "Node"> = {
  GetPluginInfo: "Identity",
  GetPluginCapabilities: "Identity",
  Probe: "Identity",
  CreateVolume: "Controller",
  DeleteVolume: "Controller",
  GetCapacity: "Controller",
  ControllerGetCapabilities: "Controller",
  NodeGetInfo: "Node",
};

type UnaryMethod = (
  request: object,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response: unknown) => void,
) => grpc.ClientUnaryCall;

/** endpoint: a gRPC target such as "unix:///path/csi.sock". */
export function connectCsi(endpoint: string): CsiTestClient {
  const services = loadCsiServices();
  const credentials = grpc.credentials.createInsecure();
  const clients = {
    Identity: new services.Identity(endpoint, credentials),
    Controller: new services.Controller(endpoint, credentials),
    Node: new services.Node(endpoint, credentials),
  };
  const call = <T>(method: CsiMethod, request: object = {}, options: CallOptions = {}) =>
    new Promise<T>((resolve, reject) => {
      const client = clients[SERVICE_OF[method]] as unknown as Record<string, UnaryMethod>;
      const invoke = client[method];
      if (invoke === undefined) throw new Error(`no method ${method}`);
      const callOptions = { deadline: Date.now() + (options.deadlineMs ?? 10_000) };
      const cancel = () => pending.cancel();
      const pending = invoke.call(client, request, callOptions, (error, response) => {
        options.signal?.removeEventListener("abort", cancel);
        if (error === null) resolve(response as T);
        else reject(error);
      });
      options.signal?.addEventListener("abort", cancel, { once: true });
    });
  return {
    call,
    fail: (method, request, options) =>
      call(method, request, options).then(
        (response) => Promise.reject(new Error(`${method} succeeded: ${JSON.stringify(response)}`)),
        (error: grpc.ServiceError) => error,
      ),
    close: () => Object.values(clients).forEach((client) => client.close()),
  };
}
