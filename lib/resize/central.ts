/**
 * Whether a central external-resizer serves the same driver: its
 * leader-election Lease, renewed within its duration, says so. Both would
 * expand the same claims, so the agent refuses to start its own (main.ts).
 */

/** The Lease as read. */
export interface CentralLease {
  name: string;
  namespace: string;
  holder: string;
  renewTime: string | undefined;
  durationSeconds: number;
}

/** The problem to report when the Lease is alive; undefined when there is none or it is stale. */
export function centralResizerProblem(
  lease: CentralLease | undefined,
  nowMs: number,
): string | undefined {
  if (lease === undefined || lease.holder === "" || lease.renewTime === undefined) return undefined;
  const renewed = Date.parse(lease.renewTime);
  if (Number.isNaN(renewed) || nowMs - renewed > lease.durationSeconds * 1000) return undefined;
  return `--enable-resizer: external-resizer holds Lease ${lease.namespace}/${lease.name} ` +
    `(holder ${lease.holder}, renewed ${lease.renewTime}) and expands this driver's volumes ` +
    `already; both would expand the same claims. Remove the central external-resizer ` +
    `(or its csi-resizer sidecar) or start without --enable-resizer`;
}
