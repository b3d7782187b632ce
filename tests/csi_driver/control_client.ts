/**
 * DriverControl: steers a standalone test driver through its control socket.
 * Uses node:http with socketPath, which works under Deno as under Node and Bun.
 * Every request has a deadline (timeoutMs) and honours an optional signal.
 */
import * as http from "node:http";
import { requireSocketPath } from "./endpoint.ts";
import type {
  CallRecord,
  CsiMethod,
  DriverControlApi,
  FaultSpec,
  FaultState,
  PoolStatus,
  VolumeRecord,
} from "./types.ts";

export interface DriverControlOptions {
  /** Per request; default 10 s. */
  timeoutMs?: number;
  /** Aborts every request made through this client. */
  signal?: AbortSignal;
}

/** A control request answered with an error status. */
export class ControlRequestError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "ControlRequestError";
    this.status = status;
  }
}

export class DriverControl implements DriverControlApi {
  readonly socketPath: string;
  readonly #timeoutMs: number;
  readonly #signal: AbortSignal | undefined;

  /** controlEndpoint: "unix:///path/control.sock" or a bare path. */
  constructor(controlEndpoint: string, options: DriverControlOptions = {}) {
    this.socketPath = requireSocketPath(controlEndpoint);
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#signal = options.signal;
  }

  volumes(): Promise<VolumeRecord[]> {
    return this.#request("GET", "/volumes") as Promise<VolumeRecord[]>;
  }

  calls(method?: CsiMethod): Promise<CallRecord[]> {
    return this.#request("GET", `/calls${query(method)}`) as Promise<CallRecord[]>;
  }

  async clearCalls(): Promise<void> {
    await this.#request("DELETE", "/calls");
  }

  pools(): Promise<PoolStatus[]> {
    return this.#request("GET", "/pools") as Promise<PoolStatus[]>;
  }

  faults(): Promise<FaultState[]> {
    return this.#request("GET", "/faults") as Promise<FaultState[]>;
  }

  async setFault(fault: FaultSpec): Promise<void> {
    await this.#request("POST", "/faults", fault);
  }

  async clearFaults(method?: CsiMethod): Promise<void> {
    await this.#request("DELETE", `/faults${query(method)}`);
  }

  resizePool(
    kind: string,
    size: number | string,
    options: { maxVolumeSize?: number | string | null } = {},
  ): Promise<PoolStatus> {
    const body = { size, ...options };
    return this.#request("PUT", `/pools/${encodeURIComponent(kind)}`, body) as Promise<PoolStatus>;
  }

  #request(method: string, path: string, body?: unknown): Promise<unknown> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const signals = [AbortSignal.timeout(this.#timeoutMs), ...(this.#signal ? [this.#signal] : [])];
    return new Promise((resolve, reject) => {
      const request = http.request({
        socketPath: this.socketPath,
        path,
        method,
        agent: false,
        signal: AbortSignal.any(signals),
        headers: payload === undefined ? {} : { "content-type": "application/json" },
      }, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => text += chunk);
        response.on("error", reject);
        response.on("end", () => settle(response.statusCode ?? 0, text, { resolve, reject }));
      });
      request.on(
        "error",
        (error) => reject(new Error(`control ${method} ${path}: ${error.message}`)),
      );
      request.end(payload);
    });
  }
}

function settle(
  status: number,
  text: string,
  promise: { resolve: (value: unknown) => void; reject: (error: Error) => void },
): void {
  let parsed: unknown = undefined;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  if (status >= 200 && status < 300) return promise.resolve(parsed);
  const message = (parsed as { error?: unknown } | undefined)?.error;
  promise.reject(
    new ControlRequestError(
      status,
      typeof message === "string" ? message : `HTTP ${status}: ${text}`,
    ),
  );
}

function query(method: CsiMethod | undefined): string {
  return method === undefined ? "" : `?method=${encodeURIComponent(method)}`;
}
