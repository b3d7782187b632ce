/**
 * A small Kubernetes REST client, rate limited like client-go
 * (--kube-api-qps/--kube-api-burst). In the compiled binary (Bun) requests
 * and watches go through Bun's native fetch (rest_fetch.ts); elsewhere over
 * node:https with keep-alive.
 *
 * Why not client-node's generated clients: they send requests through undici
 * with a custom dispatcher for the cluster CA and client certificates, and
 * Bun's built-in undici ignores the dispatcher, so every TLS request fails
 * in the compiled binary (SELF_SIGNED_CERT_IN_CHAIN). Raw JSON also lets
 * informers trim objects page by page. Credentials come from
 * lib/kube/credentials.ts.
 */
import https from "node:https";
import type { KubeCredentials } from "./credentials.ts";
import { type FetchLike, tlsFetch } from "../runtime/platform.ts";
import { fetchJson, fetchLines } from "./rest_fetch.ts";
import { apiError, type StreamOptions } from "./rest_types.ts";

export { hasStatus, KubeApiError, type StreamOptions } from "./rest_types.ts";
import { type Priority, TokenBucket } from "../queue/token_bucket.ts";

/** One API request. */
export interface KubeRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Content type of the body (PATCH needs a patch type). */
  contentType?: string;
  priority?: Priority;
  /**
   * Not counted against --kube-api-qps: the continuation pages of one list,
   * which together are one list (upstream's first list, served from the watch
   * cache, is a single request).
   */
  continuation?: boolean;
  signal?: AbortSignal;
}

/** The REST surface the rest of lib/kube uses. */
export interface KubeRest {
  request<T>(request: KubeRequest): Promise<T>;
  /** GETs a streaming path (watch); resolves when the stream ends, rejects with KubeApiError on a non-200. */
  stream(request: KubeRequest, options: StreamOptions): Promise<void>;
  close(): void;
}

const REQUEST_TIMEOUT_MS = 60_000;

/** Creates a client for the credentials' API server. */
export function createKubeRest(
  credentials: KubeCredentials,
  options: { qps: number; burst: number; userAgent: string },
): KubeRest {
  const server = credentials.server;
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: 64,
    ...definedOnly(credentials.tls),
  });
  const bucket = new TokenBucket({ qps: options.qps, burst: options.burst });
  const nativeFetch = tlsFetch(credentials.tls);
  const prepare = async (request: KubeRequest) => {
    if (!request.continuation && !(await bucket.take(request.priority ?? "high", request.signal))) {
      throw new Error(`Kubernetes request ${request.method} ${request.path} cancelled`);
    }
    return { ...(await credentials.headers()), "user-agent": options.userAgent };
  };
  const send = async (request: KubeRequest, handle: ResponseHandler) => {
    const headers = await prepare(request);
    return await sendRequest({ agent, server, headers, request, handle });
  };
  const viaFetch = async (request: KubeRequest, fetch: FetchLike) =>
    fetchParts({ fetch, server, headers: await prepare(request), request });
  return {
    request: async <T>(request: KubeRequest) =>
      nativeFetch === undefined
        ? await send(request, collectJson) as T
        : await fetchJson(await viaFetch(request, nativeFetch), REQUEST_TIMEOUT_MS) as T,
    stream: async (request, streamOptions) => {
      const streaming = { ...request, signal: streamOptions.signal };
      if (nativeFetch === undefined) {
        await send(streaming, streamLines(streamOptions));
      } else {
        await fetchLines(await viaFetch(streaming, nativeFetch), streamOptions);
      }
    },
    close: () => {
      bucket.close();
      agent.destroy();
    },
  };
}

/** The URL, headers and body of a request for the fetch transport. */
function fetchParts(
  parts: { fetch: FetchLike; server: URL; headers: Record<string, string>; request: KubeRequest },
) {
  const { request } = parts;
  const { body, headers } = encodeRequest(request, parts.headers);
  return {
    fetch: parts.fetch,
    url: `${parts.server.origin}${pathAndQuery(parts.server, request)}`,
    method: request.method,
    headers,
    body,
    signal: request.signal,
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, field]) => field !== undefined),
  ) as Partial<T>;
}

type ResponseHandler = (
  response: import("node:http").IncomingMessage,
  resolve: (value: unknown) => void,
  reject: (error: unknown) => void,
) => void;

/** The JSON body and the headers of a request, for either transport. */
function encodeRequest(
  request: KubeRequest,
  base: Record<string, string>,
): { body: string | undefined; headers: Record<string, string> } {
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  const headers: Record<string, string> = { ...base, accept: "application/json" };
  if (body !== undefined) headers["content-type"] = request.contentType ?? "application/json";
  return { body, headers };
}

/** The server's base path, the request's path and its query string. */
function pathAndQuery(server: URL, request: KubeRequest): string {
  return `${server.pathname.replace(/\/$/, "")}${request.path}${queryString(request.query)}`;
}

function queryString(query: KubeRequest["query"]): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

function sendRequest(
  parts: {
    agent: https.Agent;
    server: URL;
    headers: Record<string, string>;
    request: KubeRequest;
    handle: ResponseHandler;
  },
): Promise<unknown> {
  const { request } = parts;
  const { body, headers } = encodeRequest(request, parts.headers);
  if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const outgoing = https.request({
      agent: parts.agent,
      hostname: parts.server.hostname,
      port: parts.server.port === "" ? 443 : Number(parts.server.port),
      path: pathAndQuery(parts.server, request),
      method: request.method,
      headers,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    }, (response) => parts.handle(response, resolve, reject));
    if (!isStreaming(request)) {
      outgoing.setTimeout(
        REQUEST_TIMEOUT_MS,
        () => outgoing.destroy(new Error("request timed out")),
      );
    }
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

function isStreaming(request: KubeRequest): boolean {
  return request.query?.["watch"] === true || request.query?.["watch"] === "true";
}

const collectJson: ResponseHandler = (response, resolve, reject) => {
  const chunks: Buffer[] = [];
  response.on("data", (chunk: Buffer) => chunks.push(chunk));
  response.on("error", reject);
  response.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) return reject(apiError(status, text));
    try {
      resolve(text === "" ? undefined : JSON.parse(text));
    } catch (error) {
      reject(error);
    }
  });
};

function streamLines(options: StreamOptions): ResponseHandler {
  return (response, resolve, reject) => {
    const status = response.statusCode ?? 0;
    if (status !== 200) return collectJson(response, () => resolve(undefined), reject);
    let pending = "";
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      clearTimeout(timer);
      resolve(undefined);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => response.destroy(), options.inactivityMs);
    };
    arm();
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => {
      arm();
      pending += chunk;
      let newline = pending.indexOf("\n");
      while (newline >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.trim() !== "") options.onLine(line);
        newline = pending.indexOf("\n");
      }
    });
    response.on("end", finish);
    response.on("close", finish);
    response.on("error", finish);
  };
}
