/**
 * When an informer's list-and-watch starts again after a pass ended: at once,
 * or after a jittered, capped backoff (lib/queue/backoff.ts), so that a
 * thousand agents do not relist in the same instant after an API server
 * restart. Pure: the reflector (informer.ts) keeps the state between passes.
 */
import { type BackoffBounds, jitteredDelay } from "../../queue/backoff.ts";
import { hasStatus, KubeApiError } from "../rest/types.ts";

/** The watch told the list to start over: its resourceVersion is too old. */
export class GoneError extends Error {}

/** The server answered, in the watch stream, with something that ends the watch. */
export class WatchEventError extends Error {}

/** How one pass of list-and-watch ended. */
export type Pass =
  | { reason: "stream_end"; healthy: boolean }
  | { reason: "idle_timeout" | "expired"; error?: undefined }
  /** The owner asked for a fresh list: what the cache keeps has changed. */
  | { reason: "relist"; error?: undefined }
  | { reason: "error"; error: unknown };

/** A pass that threw: a 410 Gone (in an answer or a watch event) is a relist, the rest an error. */
export function passOfError(error: unknown): Pass {
  if (error instanceof GoneError || hasStatus(error, 410)) return { reason: "expired" };
  return { reason: "error", error };
}

/** The pass ended without any HTTP answer: refused, reset, timed out, or a watch that broke. */
export function isConnectionLoss(pass: Pass): boolean {
  if (pass.reason !== "error") return false;
  return !(pass.error instanceof KubeApiError || pass.error instanceof WatchEventError);
}

/** What the policy remembers between passes. */
interface RetryState {
  /** Failures in a row the backoff counts. */
  failures: number;
  previous: Pass | undefined;
  /** A server back after lost connections may start the count over (once until the next progress). */
  fresh: boolean;
}

export const FIRST_RETRY: RetryState = { failures: 0, previous: undefined, fresh: true };

/** Start the next pass now, or wait `delayMs` first. */
type RetryDecision = { wait: false } | { wait: true; delayMs: number };

/**
 * How many failures in a row the backoff counts after a pass (0: none, go on
 * at once). A watch that lasted was progress: the failure that ended it is a
 * first one, not the next step of an escalation long over (client-go's
 * backoff manager also forgets failures after a quiet period). A server that
 * answers again after lost connections (back from a restart, still warming
 * up: a 403 before its authorizer synced) starts the count over, once until
 * the next progress. A 410 is an answer from a working server whose history
 * moved on (its restart, a compaction): relist after the base delay; only
 * 410s in a row escalate.
 */
function countFailures(state: RetryState, pass: Pass, lasted: boolean): RetryState {
  if ((pass.reason === "stream_end" && pass.healthy) || pass.reason === "relist") {
    return { failures: 0, previous: pass, fresh: true };
  }
  const { previous } = state;
  const back = previous !== undefined && isConnectionLoss(previous) && !isConnectionLoss(pass);
  const firstGone = pass.reason === "expired" && previous?.reason !== "expired";
  let fresh = state.fresh || lasted;
  const startOver = lasted || firstGone || (back && fresh);
  if (back) fresh = false;
  return { failures: (startOver ? 0 : state.failures) + 1, previous: pass, fresh };
}

/** The policy: the next state, and whether and how long to wait before the next pass. */
export function nextRetry(
  state: RetryState,
  pass: { pass: Pass; lasted: boolean },
  backoff: { bounds: BackoffBounds; random: () => number },
): { state: RetryState; decision: RetryDecision } {
  const next = countFailures(state, pass.pass, pass.lasted);
  if (next.failures === 0) return { state: next, decision: { wait: false } };
  const delayMs = jitteredDelay(next.failures - 1, backoff.bounds, backoff.random);
  return { state: next, decision: { wait: true, delayMs } };
}
