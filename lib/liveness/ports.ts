/**
 * What agent liveness needs from the world: its own Lease's renewal and an
 * informer of the driver's Leases, opened anew each time the watch starts.
 * main.ts passes lib/kube/leases.ts.
 */
import type { CacheChange } from "../kube/informer/informer.ts";
import type { AgentLease } from "../model/lease.ts";

/** Writes this agent's Lease. */
export interface LeaseRenewer {
  /** renewTime = `nowMs`; throws when the API server did not take it. */
  renew(nowMs: number, signal: AbortSignal): Promise<void>;
}

/** The driver's Leases (label-selected informer, not started). */
export interface LeaseInformer {
  onChange(handler: (change: CacheChange<AgentLease>) => void): void;
  hasSynced(): boolean;
  run(signal: AbortSignal): Promise<void>;
}

/** Reads the Leases of a few agents of the driver. */
export interface LeaseLister {
  /** By managed-by value; the agents without a Lease are missing from the answer. */
  list(publishers: readonly string[], signal: AbortSignal): Promise<AgentLease[]>;
}
