/**
 * The REST client's one transport: the runtime's native fetch, with the TLS
 * settings bound to the fetch function (lib/runtime/platform.ts tlsFetch()).
 * One request with a JSON answer, or one streaming GET split into lines.
 *
 * Every request and every watch is bounded before its answer starts: fetch
 * cannot tell connecting from waiting, so one timer covers both (connect,
 * TLS, and the server's response headers); a request then has an overall
 * deadline, a watch its inactivity bound. Without them a frozen API server
 * or a dead path holds a worker or an informer forever.
 */
import type { AbortFanout, Unsubscribe } from "../../queue/abort_fanout.ts";
import type { FetchLike } from "../../runtime/platform.ts";
import { withoutManagedFields } from "./managed_fields.ts";
import { apiError, KubeApiError, type StreamEnd, type StreamOptions } from "./types.ts";

/** One request, ready for fetch. */
export interface FetchParts {
  fetch: FetchLike;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal | undefined;
  /** The client's one listener per caller signal, shared by its requests. */
  aborts: AbortFanout;
  /** The caller does not use a successful answer: its body is read but not parsed. */
  unread?: boolean;
  /** The answer's text is parsed without its objects' managedFields (managed_fields.ts). */
  withoutManagedFields?: boolean;
}

/**
 * Connect, TLS and response headers of any request or watch. kube-apiserver
 * answers a request within its own --request-timeout (1 min) and sends a
 * watch's headers at once, so half a minute without headers means a server
 * or a path that is not coming back for this request.
 */
export const HEADER_TIMEOUT_MS = 30_000;
/** A whole request: kube-apiserver's own --request-timeout default. */
export const REQUEST_TIMEOUT_MS = 60_000;

/** The bounds of one request. */
interface RequestTimeouts {
  /** Connect, TLS and the response headers together. */
  headerTimeoutMs: number;
  /** The whole request, body included. */
  timeoutMs: number;
}

/** Why a request was cut short by its own bound (the caller's abort keeps its own reason). */
export class RequestTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} within ${ms} ms`);
    this.name = "RequestTimeoutError";
  }
}

/**
 * No HTTP answer: the connection was refused or reset, or TLS failed (a CA
 * that no longer matches the server's certificate). Kept apart from an
 * answer, so that a caller can tell "the API server is away" from "the API
 * server said no".
 */
export class NoAnswerError extends Error {
  constructor(cause: unknown) {
    // The runtime's own words (refused, reset, the certificate's problem) are the message.
    super((cause as Error)?.message ?? String(cause), { cause });
    this.name = "NoAnswerError";
  }
}

/** The error of a fetch that got no answer: its own timeout, the caller's abort, or none at all. */
function transportError(
  error: unknown,
  own: AbortSignal,
  caller: AbortSignal | undefined,
): unknown {
  if (own.reason instanceof RequestTimeoutError) return own.reason;
  if (caller?.aborted || error instanceof KubeApiError || error instanceof SyntaxError) {
    return error;
  }
  return new NoAnswerError(error);
}

/** One request whose answer is JSON (or empty); non-2xx rejects with KubeApiError. */
export async function fetchJson(parts: FetchParts, timeouts: RequestTimeouts): Promise<unknown> {
  // One timer per bound, cleared with the answer (AbortSignal.timeout would
  // leave thousands of 60 s timers pending in a burst).
  const controller = new AbortController();
  const expire = (what: string, ms: number) =>
    setTimeout(() => controller.abort(new RequestTimeoutError(what, ms)), ms);
  const total = expire("request timed out: no complete answer", timeouts.timeoutMs);
  const headers = expire("request timed out: no response headers", timeouts.headerTimeoutMs);
  const unsubscribe = onCallerAbort(parts, () => controller.abort(parts.signal?.reason));
  try {
    const response = await parts.fetch(parts.url, {
      method: parts.method,
      headers: parts.headers,
      ...(parts.body === undefined ? {} : { body: parts.body }),
      signal: controller.signal,
    });
    clearTimeout(headers);
    if (response.status < 200 || response.status >= 300) {
      throw apiError(response.status, await response.text(), {
        retryAfter: response.headers.get("retry-after"),
      });
    }
    if (parts.unread) {
      // Read to the end all the same, so that the connection serves the next request.
      await response.arrayBuffer();
      return undefined;
    }
    const text = await response.text();
    if (text === "") return undefined;
    return JSON.parse(parts.withoutManagedFields ? withoutManagedFields(text) : text);
  } catch (error) {
    throw transportError(error, controller.signal, parts.signal);
  } finally {
    clearTimeout(total);
    clearTimeout(headers);
    unsubscribe();
  }
}

/** The caller's abort, on the client's shared listener (at once if aborted). */
function onCallerAbort(parts: FetchParts, abort: () => void): Unsubscribe {
  return parts.signal === undefined ? () => {} : parts.aborts.subscribe(parts.signal, abort);
}

/**
 * A streaming GET (watch): lines as they arrive. Errors before the answer
 * (no headers within headerTimeoutMs included) reject; once it streams, any
 * end resolves with how it ended: "end" (the server closed it), "idle" (no
 * byte for inactivityMs), "broken" (reset), "aborted" (the caller's signal).
 */
export async function fetchLines(parts: FetchParts, options: StreamOptions): Promise<StreamEnd> {
  const controller = new AbortController();
  let idle = false;
  const abort = () => controller.abort();
  options.signal.addEventListener("abort", abort, { once: true });
  const headerTimeoutMs = options.headerTimeoutMs ?? HEADER_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(
    () =>
      controller.abort(new RequestTimeoutError("watch got no response headers", headerTimeoutMs)),
    headerTimeoutMs,
  );
  try {
    if (options.signal.aborted) abort();
    const response = await parts.fetch(parts.url, {
      method: "GET",
      headers: parts.headers,
      signal: controller.signal,
    }).catch((error) => {
      throw transportError(error, controller.signal, options.signal);
    });
    if (response.status !== 200 || response.body === null) {
      const text = await response.text();
      if (response.status < 200 || response.status >= 300) {
        throw apiError(response.status, text, { retryAfter: response.headers.get("retry-after") });
      }
      return "end";
    }
    options.onOpen?.();
    // A chunk only notes its time; the one timer looks at it when it fires,
    // instead of a timer re-armed for every chunk of a busy watch.
    let lastChunkAt = performance.now();
    const checkIdle = () => {
      const quietMs = performance.now() - lastChunkAt;
      if (quietMs < options.inactivityMs) {
        timer = setTimeout(checkIdle, options.inactivityMs - quietMs);
        return;
      }
      idle = true;
      abort();
    };
    clearTimeout(timer);
    timer = setTimeout(checkIdle, options.inactivityMs);
    const onChunk = () => (lastChunkAt = performance.now());
    const end = await readLines(response.body, { onLine: options.onLine, onChunk });
    if (options.signal.aborted) return "aborted";
    return idle ? "idle" : end;
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", abort);
  }
}

async function readLines(
  body: ReadableStream<Uint8Array>,
  handlers: { onLine: (line: string) => void; onChunk: () => void },
): Promise<"end" | "broken"> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  try {
    for (;;) {
      const chunk = await reader.read().catch(() => undefined);
      // undefined: the stream broke (reset, inactivity, abort); the caller starts a new watch.
      if (chunk === undefined) return "broken";
      if (chunk.done) return "end";
      const { value } = chunk;
      handlers.onChunk();
      // Lines are cut from the chunk's text by index, and the rest kept once
      // per chunk, rather than cutting the rest again after every line.
      const text = pending + decoder.decode(value, { stream: true });
      let start = 0;
      for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
        const line = text.slice(start, newline);
        start = newline + 1;
        if (line.trim() !== "") handlers.onLine(line);
      }
      pending = start === 0 ? text : text.slice(start);
    }
  } finally {
    reader.releaseLock();
  }
}
