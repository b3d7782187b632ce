/**
 * The calls start-up makes to the API server (discovery, the capacity
 * owner's reads) wait for it, with the informers' backoff, while it is away:
 * a driver restart during a control-plane outage must not become a crash
 * loop. Only "away" is retried (no answer, a timeout, 5xx, 429); a definitive
 * answer (403, 404, a resource not served) still ends start-up with its
 * clear message.
 */
import type { Logger } from "../../log/logger.ts";
import { API_SERVER_BACKOFF, type BackoffBounds, jitteredDelay } from "../../queue/backoff.ts";
import { sleep } from "../../runtime/sleep.ts";
import { NoAnswerError, RequestTimeoutError } from "./fetch.ts";
import { KubeApiError } from "./types.ts";

/** One start-up call, named for the log and /readyz, retried while the API server is away. */
export type StartupCall = <T>(
  what: string,
  call: (signal: AbortSignal) => Promise<T>,
) => Promise<T>;

/**
 * A refusal of authentication or authorization right after the server was
 * away is its authorizer still syncing after a restart, not a verdict: up
 * to this many such answers are retried too.
 */
export const WARMING_UP_RETRIES = 3;

/** How a failed start-up call is taken. */
type FailureKind = "away" | "refused" | "final";

/** Whether the API server is away, refused a request (401, 403), or answered for good. */
export function classifyFailure(error: unknown): FailureKind {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof NoAnswerError || cause instanceof RequestTimeoutError) return "away";
    if (cause instanceof KubeApiError) {
      if (cause.status >= 500 || cause.status === 429) return "away";
      return cause.status === 401 || cause.status === 403 ? "refused" : "final";
    }
  }
  return "final";
}

/** What the retry loop needs. */
interface StartupRetryOptions {
  /** The shutdown signal: a wait ends with it, and the call's last error is thrown. */
  signal: AbortSignal;
  logger: Logger;
  /** What start-up waits for while the server is away; undefined once it answers. */
  waiting?: (reason: string | undefined) => void;
  backoff?: BackoffBounds;
  random?: () => number;
}

/** The start-up call of the agent: each failure logged in one line with the next delay. */
export function startupRetry(options: StartupRetryOptions): StartupCall {
  const backoff = options.backoff ?? API_SERVER_BACKOFF;
  return async <T>(what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    let failures = 0;
    let warmups = 0;
    for (;;) {
      try {
        const result = await call(options.signal);
        if (failures > 0) {
          options.logger.notice({ call: what, failures }, "The API server answers again");
          options.waiting?.(undefined);
        }
        return result;
      } catch (error) {
        const kind = classifyFailure(error);
        const warming = kind === "refused" && failures > 0 && warmups++ < WARMING_UP_RETRIES;
        if (options.signal.aborted || (kind !== "away" && !warming)) throw error;
        const retryInMs = Math.round(jitteredDelay(failures++, backoff, options.random));
        const problem = (error as Error).message;
        options.logger.warn(
          { call: what, attempt: failures, retryInMs, err: problem },
          "The API server does not answer a start-up call: retrying",
        );
        const tries = failures === 1 ? "1 try" : `${failures} tries`;
        options.waiting?.(
          `waiting for the API server to answer ${what} (${tries} so far; the last: ${problem})`,
        );
        if (!(await sleep(retryInMs, options.signal))) throw error;
      }
    }
  };
}
