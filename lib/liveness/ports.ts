/**
 * What agent liveness needs from the world: its own Lease's renewal and the
 * informer of the driver's Leases. main.ts passes lib/kube/leases.ts.
 */
import type { CacheChange } from "../kube/informer/informer.ts";
import type { AgentLease } from "../model/lease.ts";

/** Writes this agent's Lease. */
export interface LeaseRenewer {
  /** renewTime = `nowMs`; throws when the API server did not take it. */
  renew(nowMs: number, signal: AbortSignal): Promise<void>;
}

/** The driver's Leases (label-selected informer, run by main.ts). */
export interface LeaseCache {
  onChange(handler: (change: CacheChange<AgentLease>) => void): void;
  hasSynced(): boolean;
}
