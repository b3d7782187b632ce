/**
 * A transparent recording proxy for a CSI driver's unix socket: agents
 * connect to the proxy's socket, and every call is passed on to the driver as
 * the raw bytes the agent sent (nothing is decoded and encoded again on the
 * way), with its metadata and deadline; the driver's answer or status comes
 * back the same way. Meanwhile each call is recorded, its request decoded
 * with the project's CSI schema (lib/csi/proto.ts) for methods it has.
 *
 * Drivers that log what they receive (the test driver does) need no proxy;
 * the upstream hostpath driver logs no request bodies at the verbosity the
 * cluster runs it, and echoes nothing back.
 *
 * Secrets: a record's `request` has every `secrets` value replaced (as in the
 * test driver's call log), so records can be printed; the values are kept
 * apart, reachable only through secretsOf(record), for tests that compare
 * them without printing them.
 */

import * as grpc from "@grpc/grpc-js";
import { loadCsiServices } from "../../lib/csi/proto.ts";
import { stripSecrets } from "../csi_driver/call_log.ts";
import { statusName } from "../csi_driver/csi_error.ts";
import type { CallRecord } from "../csi_driver/types.ts";
import { CSI_RPCS } from "./csi_rpcs.ts";

/** One call through the proxy; the shape of the test driver's CallRecord, any CSI method. */
export interface RecordedCall extends Omit<CallRecord, "method"> {
  method: string;
  /** The decoded answer (methods the project's schema has), null on error or while running. */
  response: unknown;
}

type Bytes = Buffer;
const raw = (bytes: Bytes): Bytes => bytes;

/** Headers grpc-js sets itself on the way out; forwarding them would duplicate them. */
const OWN_HEADERS = ["user-agent", "content-type", "te", "grpc-accept-encoding", "grpc-encoding"];

type Decoder = { request: (bytes: Bytes) => unknown; response: (bytes: Bytes) => unknown };

/** Decoders of the methods the project's schema has, by method name. */
function decoders(): Map<string, Decoder> {
  const services = loadCsiServices();
  const found = new Map<string, Decoder>();
  for (const constructor of Object.values(services)) {
    const service: grpc.ServiceDefinition = constructor.service;
    for (const [name, method] of Object.entries(service)) {
      found.set(name, {
        request: (bytes) => method.requestDeserialize(bytes),
        response: (bytes) => method.responseDeserialize(bytes),
      });
    }
  }
  return found;
}

export interface RecorderOptions {
  /** Socket path the proxy listens on (what agents get as --csi-address). */
  listen: string;
  /** Socket path of the driver. */
  target: string;
  /** Records kept, oldest dropped first; default 10000. */
  limit?: number;
}

export class CsiRecorder {
  readonly listen: string;
  readonly target: string;
  readonly #server = new grpc.Server();
  readonly #client: grpc.Client;
  readonly #decoders = decoders();
  readonly #limit: number;
  readonly #secrets = new WeakMap<RecordedCall, Record<string, string>>();
  #records: RecordedCall[] = [];
  #seq = 0;

  private constructor(options: RecorderOptions) {
    this.listen = options.listen;
    this.target = options.target;
    this.#limit = options.limit ?? 10_000;
    this.#client = new grpc.Client(`unix://${options.target}`, grpc.credentials.createInsecure());
    for (const [service, rpcs] of Object.entries(CSI_RPCS)) {
      const definition: Record<string, grpc.MethodDefinition<Bytes, Bytes>> = {};
      const implementation: grpc.UntypedServiceImplementation = {};
      for (const name of rpcs.unary) {
        definition[name] = methodDefinition(`/csi.v1.${service}/${name}`, false);
        implementation[name] = this.#unary(name, `/csi.v1.${service}/${name}`);
      }
      for (const name of rpcs.serverStreaming ?? []) {
        definition[name] = methodDefinition(`/csi.v1.${service}/${name}`, true);
        implementation[name] = this.#serverStream(name, `/csi.v1.${service}/${name}`);
      }
      this.#server.addService(definition, implementation);
    }
  }

  /** Listens on `listen`, passing calls on to `target`. */
  static async start(options: RecorderOptions): Promise<CsiRecorder> {
    const recorder = new CsiRecorder(options);
    await new Promise<void>((resolve, reject) => {
      recorder.#server.bindAsync(
        `unix://${options.listen}`,
        grpc.ServerCredentials.createInsecure(),
        (error) => (error ? reject(error) : resolve()),
      );
    });
    return recorder;
  }

  /** The recorded calls (of one method, if given), oldest first. */
  calls(method?: string): RecordedCall[] {
    return this.#records.filter((record) => method === undefined || record.method === method);
  }

  /** The `secrets` map the call carried, unstripped; never print it. */
  secretsOf(record: RecordedCall): Record<string, string> | undefined {
    return this.#secrets.get(record);
  }

  clear(): void {
    this.#records = [];
  }

  /** Stops listening, ends calls in flight and closes the connection to the driver. */
  close(): void {
    this.#server.forceShutdown();
    this.#client.close();
  }

  #begin(method: string, bytes: Bytes): RecordedCall {
    const decoded = this.#decode(method, "request", bytes);
    const { request, secretKeys } = decoded === null
      ? { request: { undecoded: `${bytes.length} bytes` }, secretKeys: [] }
      : stripSecrets(decoded);
    const record: RecordedCall = {
      seq: ++this.#seq,
      method,
      time: new Date().toISOString(),
      request,
      secretKeys,
      code: null,
      codeName: null,
      message: "",
      durationMs: null,
      response: null,
    };
    const secrets = (decoded as { secrets?: Record<string, string> } | null)?.secrets;
    if (secrets && Object.keys(secrets).length > 0) this.#secrets.set(record, { ...secrets });
    this.#records.push(record);
    if (this.#records.length > this.#limit + Math.ceil(this.#limit / 4)) {
      this.#records = this.#records.slice(-this.#limit);
    }
    return record;
  }

  /**
   * Records how the call ended for the agent. A call the agent gave up on
   * (its deadline passed, or it went away) is cancelled on the way to the
   * driver too; it is recorded as the agent saw it: DEADLINE_EXCEEDED once
   * the deadline has passed, else CANCELLED.
   */
  #finish(
    record: RecordedCall,
    started: number,
    outcome: { error?: grpc.ServiceError | null; callerGone?: boolean; deadline?: grpc.Deadline },
  ) {
    let code = outcome.error ? outcome.error.code : grpc.status.OK;
    let message = outcome.error?.details ?? "";
    const deadline = outcome.deadline instanceof Date
      ? outcome.deadline.getTime()
      : outcome.deadline ?? Infinity;
    if (outcome.callerGone && code === grpc.status.CANCELLED && Date.now() >= deadline) {
      code = grpc.status.DEADLINE_EXCEEDED;
      message = "the caller's deadline passed (recorded by the proxy)";
    }
    record.code = code;
    record.codeName = statusName(code);
    record.message = message;
    record.durationMs = Math.round(performance.now() - started);
  }

  #decode(method: string, part: "request" | "response", bytes: Bytes): unknown {
    const decoder = this.#decoders.get(method);
    if (!decoder) return null;
    try {
      return decoder[part](bytes);
    } catch {
      return null;
    }
  }

  #unary(method: string, path: string): grpc.handleUnaryCall<Bytes, Bytes> {
    return (call, callback) => {
      const started = performance.now();
      const record = this.#begin(method, call.request);
      const deadline = call.getDeadline();
      let callerGone = false;
      const outgoing = this.#client.makeUnaryRequest<Bytes, Bytes>(
        path,
        raw,
        raw,
        call.request,
        forwardedMetadata(call.metadata),
        { deadline },
        (error, response) => {
          this.#finish(record, started, { error, callerGone, deadline });
          if (error) return callback(error);
          if (response) record.response = this.#decode(method, "response", response);
          callback(null, response);
        },
      );
      call.on("cancelled", () => {
        callerGone = true;
        outgoing.cancel();
      });
    };
  }

  #serverStream(method: string, path: string): grpc.handleServerStreamingCall<Bytes, Bytes> {
    return (call) => {
      const started = performance.now();
      const record = this.#begin(method, call.request);
      const outgoing = this.#client.makeServerStreamRequest<Bytes, Bytes>(
        path,
        raw,
        raw,
        call.request,
        forwardedMetadata(call.metadata),
        { deadline: call.getDeadline() },
      );
      outgoing.on("data", (message: Bytes) => call.write(message));
      outgoing.on("error", (error: grpc.ServiceError) => {
        this.#finish(record, started, { error });
        call.destroy(error);
      });
      outgoing.on("end", () => {
        this.#finish(record, started, {});
        call.end();
      });
      call.on("cancelled", () => outgoing.cancel());
    };
  }
}

function methodDefinition(
  path: string,
  responseStream: boolean,
): grpc.MethodDefinition<Bytes, Bytes> {
  return {
    path,
    requestStream: false,
    responseStream,
    requestSerialize: raw,
    requestDeserialize: raw,
    responseSerialize: raw,
    responseDeserialize: raw,
  };
}

function forwardedMetadata(incoming: grpc.Metadata): grpc.Metadata {
  const metadata = incoming.clone();
  for (const header of OWN_HEADERS) metadata.remove(header);
  return metadata;
}
