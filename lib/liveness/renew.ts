/**
 * This agent's Lease, renewed every LEASE_RENEW_MS: the one write per agent
 * that lets the others see it is alive. A failed renewal is tried again
 * sooner (backoff up to the renewal period), never more than once a second.
 */
import type { Logger } from "../log/logger.ts";
import { LEASE_RENEW_MS } from "../model/lease.ts";
import { sleep } from "../runtime/sleep.ts";
import type { LeaseRenewer } from "./ports.ts";

const FIRST_RETRY_MS = 1000;

/** Renews until `signal` aborts. */
export async function renewLease(
  deps: {
    lease: LeaseRenewer;
    logger: Logger;
    now?: () => number;
    renewMs?: number;
    firstRetryMs?: number;
  },
  signal: AbortSignal,
): Promise<void> {
  const now = deps.now ?? Date.now;
  const renewMs = deps.renewMs ?? LEASE_RENEW_MS;
  const firstRetryMs = deps.firstRetryMs ?? FIRST_RETRY_MS;
  let retryMs = firstRetryMs;
  let failing = false;
  while (!signal.aborted) {
    let waitMs = renewMs;
    try {
      await deps.lease.renew(now(), signal);
      if (failing) deps.logger.info("Renewed this agent's Lease again");
      failing = false;
      retryMs = firstRetryMs;
    } catch (error) {
      if (signal.aborted) return;
      if (!failing) {
        deps.logger.warn(
          { err: error },
          "Cannot renew this agent's Lease: the other agents will count it as gone",
        );
      }
      failing = true;
      waitMs = retryMs;
      retryMs = Math.min(retryMs * 2, renewMs);
    }
    await sleep(waitMs, signal);
  }
}
