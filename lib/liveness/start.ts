/**
 * Agent liveness: this agent renews its Lease until the soft stop; the
 * Lease watch, which the paths that act for a gone agent start and stop, is
 * built here.
 */
import type { Logger } from "../log/logger.ts";
import type { Lifecycle } from "../runtime/lifecycle.ts";
import type { LeaseInformer, LeaseLister, LeaseRenewer } from "./ports.ts";
import { renewLease } from "./renew.ts";
import { LeaseWatch } from "./watch.ts";

/** Starts the renewals; returns the (stopped) watch of the driver's Leases. */
export function startLiveness(
  parts: {
    lease: LeaseRenewer;
    openLeases: () => LeaseInformer;
    lister: LeaseLister;
    logger: Logger;
    now?: () => number;
  },
  life: Lifecycle,
): LeaseWatch {
  const now = parts.now ?? Date.now;
  const renewal = renewLease(
    { lease: parts.lease, logger: parts.logger, now },
    life.shutdown.signal,
  );
  life.track(renewal, { name: "lease renewal" });
  return new LeaseWatch(
    { open: parts.openLeases, lister: parts.lister, now, logger: parts.logger },
    life.shutdown.signal,
  );
}
