/**
 * A small Kubernetes REST client, rate limited like client-go
 * (--kube-api-qps/--kube-api-burst). Requests and watches go through the
 * runtime's native fetch (fetch.ts), with the cluster's TLS settings
 * bound by lib/runtime/platform.ts: the same code runs in the compiled binary
 * (Bun) and in the unit tests (Deno).
 *
 * Why not client-node's generated clients: they send requests through undici
 * with a custom dispatcher for the cluster CA and client certificates, and
 * Bun's built-in undici ignores the dispatcher, so every TLS request fails
 * in the compiled binary (SELF_SIGNED_CERT_IN_CHAIN). Bun's native fetch also
 * costs a fraction of the CPU per request of Bun's JavaScript node:https.
 * Raw JSON also lets informers trim objects page by page. Credentials come
 * from lib/kube/rest/credentials.ts.
 */
import { type Priority, TokenBucket } from "../../queue/token_bucket.ts";
import { AbortFanout } from "../../queue/abort_fanout.ts";
import type { Logger } from "../../log/logger.ts";
import { type TlsFetch, tlsFetch } from "../../runtime/platform.ts";
import { sleep } from "../../runtime/sleep.ts";
import { caFileTransport } from "./ca_file.ts";
import type { KubeCredentials } from "./credentials.ts";
import { fetchJson, fetchLines, HEADER_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from "./fetch.ts";
import { KubeApiError, type StreamEnd, type StreamOptions } from "./types.ts";

export { hasStatus, KubeApiError, type StreamEnd, type StreamOptions } from "./types.ts";

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
   * Not counted against the client's budget: the continuation pages of one
   * list, which together are one list (upstream's first list, served from the
   * watch cache, is a single request), or a write whose token the caller
   * already took from the same budget (see createKubeRest's `budget`).
   */
  unmetered?: boolean;
  /**
   * The caller does not use the answer of a successful write (each claim's
   * Events and PV, capacity updates): request() resolves with undefined
   * instead of parsing the object kube-apiserver sends back.
   */
  unread?: boolean;
  /**
   * The caller keeps no managedFields (an informer's list): they are cut from
   * the answer's text before it is parsed (managed_fields.ts).
   */
  withoutManagedFields?: boolean;
  signal?: AbortSignal;
  /**
   * Told before each wait for a Retry-After: an informer whose list or watch
   * is held so counts as failing (readiness), where it would otherwise look
   * healthy for as long as the waits last.
   */
  onRetryAfter?: (wait: RetryAfterWait) => void;
}

/** A refusal that asked for a wait, and how long the client waits before sending again. */
export interface RetryAfterWait {
  error: KubeApiError;
  waitMs: number;
}

/** The REST surface the rest of lib/kube uses. */
export interface KubeRest {
  request<T>(request: KubeRequest): Promise<T>;
  /**
   * GETs a streaming path (watch); resolves with how the stream ended, rejects
   * with KubeApiError on a non-200 and with RequestTimeoutError without headers.
   */
  stream(request: KubeRequest, options: StreamOptions): Promise<StreamEnd>;
  /**
   * Resolves when the API server next answers a request of this client
   * (success, or an error status below 500 other than 429: the server is
   * there and serving); a retry loop waiting out a backoff after a lost
   * connection may take it as the sign to try again now.
   */
  answered?(): Promise<void>;
  close(): void;
}

const TIMEOUTS = { headerTimeoutMs: HEADER_TIMEOUT_MS, timeoutMs: REQUEST_TIMEOUT_MS };

/** How a client is made. */
interface KubeRestOptions {
  userAgent: string;
  /** The request budget: --kube-api-qps and --kube-api-burst, or a bucket the caller shares. */
  budget: { qps: number; burst: number } | TokenBucket;
  /** The transport; the runtime's fetch with the credentials' TLS settings unless a test injects one. */
  transport?: TlsFetch;
  /** Where a change of the cluster CA file is reported. */
  logger?: Logger;
}

/** Creates a client for the credentials' API server. */
export function createKubeRest(credentials: KubeCredentials, options: KubeRestOptions): KubeRest {
  // The server's origin and path prefix, made once rather than per request.
  const base = `${credentials.server.origin}${credentials.server.pathname.replace(/\/$/, "")}`;
  const bucket = options.budget instanceof TokenBucket
    ? options.budget
    : new TokenBucket(options.budget);
  const transport = options.transport ?? credentialsTransport(credentials, options.logger);
  const aborts = new AbortFanout();
  const prepare = async (request: KubeRequest) => {
    if (!request.unmetered && !(await bucket.take(request.priority ?? "high", request.signal))) {
      throw new Error(`Kubernetes request ${request.method} ${request.path} cancelled`);
    }
    const headers = { ...(await credentials.headers()), "user-agent": options.userAgent };
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const allHeaders: Record<string, string> = { ...headers, accept: "application/json" };
    if (body !== undefined) allHeaders["content-type"] = request.contentType ?? "application/json";
    return {
      fetch: transport.fetch,
      url: `${base}${request.path}${queryString(request.query)}`,
      method: request.method,
      headers: allHeaders,
      body,
      signal: request.signal,
      aborts,
      unread: request.unread === true,
      withoutManagedFields: request.withoutManagedFields === true,
    };
  };
  const answers = new Answers();
  const heard = (error: unknown) => {
    if (error instanceof KubeApiError && error.status < 500 && error.status !== 429) answers.fire();
    throw error;
  };
  return {
    request: <T>(request: KubeRequest) =>
      followRetryAfter(request, async () => {
        const answer = await fetchJson(await prepare(request), TIMEOUTS).catch(heard) as T;
        answers.fire();
        return answer;
      }),
    stream: (request, streamOptions) => {
      const onOpen = () => {
        answers.fire();
        streamOptions.onOpen?.();
      };
      const wait = { signal: streamOptions.signal, onRetryAfter: request.onRetryAfter };
      return followRetryAfter(wait, async () => {
        const prepared = await prepare({ ...request, signal: streamOptions.signal });
        return await fetchLines(prepared, { ...streamOptions, onOpen }).catch(heard);
      });
    },
    answered: () => answers.next(),
    close: () => {
      bucket.close();
      transport.close();
    },
  };
}

/** The runtime's fetch with the credentials' TLS settings; a CA file is followed. */
function credentialsTransport(credentials: KubeCredentials, logger?: Logger): TlsFetch {
  const { tls, caFile } = credentials;
  if (caFile === undefined) return tlsFetch(tls);
  return caFileTransport({ tls, caFile, ...(logger === undefined ? {} : { logger }) });
}

/** client-go's maxRetries (rest/request.go NewRequest): Retry-After answers one request follows. */
export const MAX_RETRY_AFTER_RETRIES = 10;

/**
 * The longest Retry-After followed: one request's own bound. client-go waits
 * whatever the server says; a worker held longer would do better to fail
 * and go through its own queue's backoff.
 */
const MAX_RETRY_AFTER_MS = REQUEST_TIMEOUT_MS;

/**
 * Tries again, as client-go does (rest/with_retry.go IsNextRetry and
 * checkWait), after a 429 or 5xx answer that carries Retry-After: waits that
 * long, then sends the request again; a metered request takes a new token
 * from the budget like its first try (client-go's tryThrottle before a
 * retry). kube-apiserver answers 429 when priority and fairness turns a
 * request away: it was not served, and a second later it usually is. A 5xx
 * may have been served; a create sent again then answers 409, which its
 * caller takes as "exists". Without this a PV write refused so went through
 * the PV saver's backoff, and a claim's read through the claim queue's.
 * After MAX_RETRY_AFTER_RETRIES, or when the caller aborts while waiting,
 * the last refusal is what the caller gets.
 */
async function followRetryAfter<T>(
  request: {
    signal?: AbortSignal | undefined;
    onRetryAfter?: KubeRequest["onRetryAfter"] | undefined;
  },
  attempt: () => Promise<T>,
): Promise<T> {
  for (let retries = 0;; retries++) {
    try {
      return await attempt();
    } catch (error) {
      const waitMs = retryAfterMs(error);
      if (waitMs === undefined || retries >= MAX_RETRY_AFTER_RETRIES) throw error;
      request.onRetryAfter?.({ error: error as KubeApiError, waitMs });
      if (!(await sleep(waitMs, request.signal))) throw error;
    }
  }
}

function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof KubeApiError) || error.retryAfterSeconds === undefined) return undefined;
  if (error.status !== 429 && error.status < 500) return undefined;
  return Math.min(error.retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS);
}

/**
 * A signal that fires at each answer: next() resolves at the next one. The
 * promise is made only when someone waits (a retry loop after a lost
 * connection), not afresh at every answer.
 */
class Answers {
  #next: PromiseWithResolvers<void> | undefined;

  fire(): void {
    this.#next?.resolve();
    this.#next = undefined;
  }

  next(): Promise<void> {
    return (this.#next ??= Promise.withResolvers<void>()).promise;
  }
}

/** `?key=value&…` of the query's defined parameters; "" for none. */
function queryString(query: KubeRequest["query"]): string {
  if (query === undefined) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
