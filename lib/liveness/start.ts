/**
 * Agent liveness: this agent renews its Lease until the soft stop, and keeps
 * the view of every agent of its driver from the Lease informer, for the
 * paths that act for an agent that is gone.
 */
import type { Logger } from "../log/logger.ts";
import type { Lifecycle } from "../runtime/lifecycle.ts";
import type { LeaseCache, LeaseRenewer } from "./ports.ts";
import { renewLease } from "./renew.ts";
import { LivenessView } from "./view.ts";

/** The view, and whether its cache has synced. */
export interface Liveness {
  view: LivenessView;
  hasSynced(): boolean;
}

/** Registers the view's handler (before the informer runs) and starts the renewals. */
export function startLiveness(
  parts: { lease: LeaseRenewer; leases: LeaseCache; logger: Logger; now?: () => number },
  life: Lifecycle,
): Liveness {
  const now = parts.now ?? Date.now;
  const view = new LivenessView(now);
  parts.leases.onChange((change) => view.observe(change));
  const renewal = renewLease(
    { lease: parts.lease, logger: parts.logger, now },
    life.shutdown.signal,
  );
  life.track(renewal, { name: "lease renewal" });
  return { view, hasSynced: () => parts.leases.hasSynced() };
}
