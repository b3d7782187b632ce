/**
 * The REST client's one transport: the runtime's native fetch, with the TLS
 * settings bound to the fetch function (lib/runtime/platform.ts tlsFetch()).
 * One request with a JSON answer, or one streaming GET split into lines.
 */
import type { FetchLike } from "../runtime/platform.ts";
import { apiError, type StreamOptions } from "./rest_types.ts";

/** One request, ready for fetch. */
export interface FetchParts {
  fetch: FetchLike;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal | undefined;
}

/** One request whose answer is JSON (or empty); non-2xx rejects with KubeApiError. */
export async function fetchJson(parts: FetchParts, timeoutMs: number): Promise<unknown> {
  // One timer per request, cleared with the answer (AbortSignal.timeout would
  // leave thousands of 60 s timers pending in a burst).
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error("request timed out")), timeoutMs);
  const abort = () => controller.abort(parts.signal?.reason);
  parts.signal?.addEventListener("abort", abort, { once: true });
  try {
    if (parts.signal?.aborted) abort();
    const response = await parts.fetch(parts.url, {
      method: parts.method,
      headers: parts.headers,
      ...(parts.body === undefined ? {} : { body: parts.body }),
      signal: controller.signal,
    });
    const text = await response.text();
    if (response.status < 200 || response.status >= 300) throw apiError(response.status, text);
    return text === "" ? undefined : JSON.parse(text);
  } finally {
    clearTimeout(timer);
    parts.signal?.removeEventListener("abort", abort);
  }
}

/**
 * A streaming GET (watch): lines as they arrive. Errors before the answer
 * reject; once it streams, any end (the server's, an error, no byte for
 * inactivityMs, the caller's abort) resolves: the informer then starts a new
 * watch from the last resourceVersion.
 */
export async function fetchLines(parts: FetchParts, options: StreamOptions): Promise<void> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  options.signal.addEventListener("abort", abort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    if (options.signal.aborted) abort();
    const response = await parts.fetch(parts.url, {
      method: "GET",
      headers: parts.headers,
      signal: controller.signal,
    });
    if (response.status !== 200 || response.body === null) {
      const text = await response.text();
      if (response.status < 200 || response.status >= 300) throw apiError(response.status, text);
      return;
    }
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(abort, options.inactivityMs);
    };
    arm();
    await readLines(response.body, { onLine: options.onLine, onChunk: arm });
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", abort);
  }
}

async function readLines(
  body: ReadableStream<Uint8Array>,
  handlers: { onLine: (line: string) => void; onChunk: () => void },
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  try {
    for (;;) {
      const chunk = await reader.read().catch(() => undefined);
      // undefined: the stream broke (reset, inactivity, abort); the caller starts a new watch.
      if (chunk === undefined || chunk.done) return;
      const { value } = chunk;
      handlers.onChunk();
      pending += decoder.decode(value, { stream: true });
      let newline = pending.indexOf("\n");
      while (newline >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.trim() !== "") handlers.onLine(line);
        newline = pending.indexOf("\n");
      }
    }
  } finally {
    reader.releaseLock();
  }
}
