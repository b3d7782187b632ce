/** The REST client's types and errors, shared by the client (client.ts) and its transport (fetch.ts). */

/** A non-2xx answer of the API server, with its Status reason ("NotFound", "AlreadyExists", "Conflict", "Gone", ...). */
export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  /** The fields the Status names (details.causes[].field), e.g. "metadata.labels". */
  readonly fields: string[];
  /** The answer's Retry-After in whole seconds, when it had one (429, 5xx). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    status: number,
    reason: string,
    message: string,
    fields: string[] = [],
    options: { retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = "KubeApiError";
    this.status = status;
    this.reason = reason;
    this.fields = fields;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** True for an error with the given HTTP status. */
export function hasStatus(error: unknown, status: number): boolean {
  return error instanceof KubeApiError && error.status === status;
}

/** A streaming response: lines are delivered as they arrive. */
export interface StreamOptions {
  signal: AbortSignal;
  onLine: (line: string) => void;
  /** Called once the response headers (200) arrived: the stream is open. */
  onOpen?: () => void;
  /** The stream is ended when no byte arrives for this long (the server sends bookmarks). */
  inactivityMs: number;
  /** Connect, TLS and the response headers together must take less than this (default 30 s). */
  headerTimeoutMs?: number;
}

/** How an open stream ended: the server closed it, it went idle, it broke, or the caller aborted. */
export type StreamEnd = "end" | "idle" | "broken" | "aborted";

/**
 * The KubeApiError of a non-2xx answer, with the reason and message of its
 * Status body and its Retry-After header.
 */
export function apiError(
  status: number,
  text: string,
  headers: { retryAfter?: string | null } = {},
): KubeApiError {
  const retry = retryAfterSeconds(headers.retryAfter);
  const options = retry === undefined ? {} : { retryAfterSeconds: retry };
  try {
    const parsed = JSON.parse(text) as {
      reason?: string;
      message?: string;
      details?: { causes?: { field?: unknown }[] };
    };
    const fields = (parsed.details?.causes ?? []).map((cause) => cause.field)
      .filter((field): field is string => typeof field === "string" && field !== "");
    return new KubeApiError(status, parsed.reason ?? "", parsed.message ?? text, [
      ...new Set(fields),
    ], options);
  } catch {
    return new KubeApiError(status, "", text.slice(0, 500) || `HTTP ${status}`, [], options);
  }
}

/**
 * Retry-After as client-go reads it (rest/request.go retryAfterSeconds):
 * whole seconds only (strconv.Atoi), an HTTP date is ignored; below zero is
 * no wait.
 */
function retryAfterSeconds(header: string | null | undefined): number | undefined {
  if (header === undefined || header === null || !/^[+-]?\d+$/.test(header)) return undefined;
  return Math.max(0, Number(header));
}
