/** The REST client's types and errors, shared by the client (rest.ts) and its transport (rest_fetch.ts). */

/** A non-2xx answer of the API server, with its Status reason ("NotFound", "AlreadyExists", "Conflict", "Gone", ...). */
export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  /** The fields the Status names (details.causes[].field), e.g. "metadata.labels". */
  readonly fields: string[];

  constructor(status: number, reason: string, message: string, fields: string[] = []) {
    super(message);
    this.name = "KubeApiError";
    this.status = status;
    this.reason = reason;
    this.fields = fields;
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

/** The KubeApiError of a non-2xx answer, with the reason and message of its Status body. */
export function apiError(status: number, text: string): KubeApiError {
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
    ]);
  } catch {
    return new KubeApiError(status, "", text.slice(0, 500) || `HTTP ${status}`);
  }
}
