/**
 * Which agents of the driver are alive, from their Leases as this agent's
 * informer delivers them. A Lease's renewTime is another node's clock, so it
 * is only compared for change: an agent is alive until leaseDurationSeconds
 * after this agent last saw its renewTime change (as client-go's leader
 * election does). A Lease first seen counts as just renewed: after a restart,
 * an agent that is gone looks alive for one lease duration more, never less.
 */
import type { AgentLease } from "../model/lease.ts";

/** One agent as this agent last saw its Lease. */
export interface AgentSighting {
  /** The managed-by value of its CSIStorageCapacity objects. */
  publisher: string;
  node: string;
  lease: string;
  /** This agent's clock when the Lease's renewTime last changed. */
  renewedAtMs: number;
  /** Alive until then, on this agent's clock. */
  aliveUntilMs: number;
  /** The Lease's notes, as last seen (lib/model/lease.ts leaseNotes). */
  segment?: Record<string, string>;
  releaseAfter?: string;
  nodeGoneSinceMs?: number;
}

/** A change of the Lease cache. */
export interface LeaseChange {
  old: AgentLease | undefined;
  new: AgentLease | undefined;
}

/** The agents' sightings, kept from the Lease cache's changes. */
export class LivenessView {
  readonly #now: () => number;
  readonly #byPublisher = new Map<string, AgentSighting>();

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The Lease cache's change handler. */
  observe(change: LeaseChange): void {
    const before = change.old;
    const after = change.new;
    if (before !== undefined && before.publisher !== after?.publisher) {
      this.#byPublisher.delete(before.publisher);
    }
    if (after === undefined) return;
    const seen = this.#byPublisher.get(after.publisher);
    const now = this.#now();
    const renewed = seen === undefined || before?.renewTime !== after.renewTime;
    this.#byPublisher.set(after.publisher, {
      publisher: after.publisher,
      node: after.node,
      lease: after.name,
      renewedAtMs: renewed ? now : seen.renewedAtMs,
      aliveUntilMs: renewed ? now + after.durationMs : seen.aliveUntilMs,
      ...notesOf(after),
    });
  }

  /** The agent with this managed-by value, if it has a Lease. */
  get(publisher: string): AgentSighting | undefined {
    return this.#byPublisher.get(publisher);
  }

  /** Every agent with a Lease, alive or not. */
  agents(): AgentSighting[] {
    return [...this.#byPublisher.values()];
  }
}

/** Whether the agent was alive at `nowMs`. */
export function isAlive(agent: AgentSighting, nowMs: number): boolean {
  return nowMs < agent.aliveUntilMs;
}

function notesOf(
  lease: AgentLease,
): Pick<AgentSighting, "segment" | "releaseAfter" | "nodeGoneSinceMs"> {
  const { segment, releaseAfter, nodeGoneSinceMs } = lease;
  return {
    ...(segment === undefined ? {} : { segment }),
    ...(releaseAfter === undefined ? {} : { releaseAfter }),
    ...(nodeGoneSinceMs === undefined ? {} : { nodeGoneSinceMs }),
  };
}
