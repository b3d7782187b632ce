/**
 * What an agent that does not watch the Leases knows of the watchers: their
 * Leases read once per renewal period (one small list), so that when the
 * watchers are gone the next agents in rank take over. Alive as the view
 * says; a Lease missing for a lease duration counts as gone too.
 */
import { LEASE_DURATION_SECONDS, LEASE_RENEW_MS } from "../model/lease.ts";
import type { AgentLease } from "../model/lease.ts";
import type { LeaseLister } from "./ports.ts";
import { isAlive, LivenessView } from "./view.ts";

/** Reads of the watchers' Leases and what they showed. */
export class LeaseProbe {
  readonly #lister: LeaseLister;
  readonly #now: () => number;
  #view: LivenessView;
  #leases = new Map<string, AgentLease>();
  #absentSince = new Map<string, number>();
  #lastAtMs = -Infinity;

  constructor(deps: { lister: LeaseLister; now: () => number }) {
    this.#lister = deps.lister;
    this.#now = deps.now;
    this.#view = new LivenessView(deps.now);
  }

  /** Forgets every read: what it saw gets old while this agent watches. */
  reset(): void {
    this.#view = new LivenessView(this.#now);
    this.#leases = new Map();
    this.#absentSince = new Map();
    this.#lastAtMs = -Infinity;
  }

  /** Reads the Leases of `publishers`, at most once per renewal period; true when it read. */
  async probe(publishers: readonly string[], signal: AbortSignal): Promise<boolean> {
    const nowMs = this.#now();
    if (publishers.length === 0 || nowMs - this.#lastAtMs < LEASE_RENEW_MS) return false;
    this.#lastAtMs = nowMs;
    const found = new Map(
      (await this.#lister.list(publishers, signal)).map((lease) => [lease.publisher, lease]),
    );
    for (const publisher of publishers) {
      const before = this.#leases.get(publisher);
      const lease = found.get(publisher);
      if (lease === undefined) {
        if (before !== undefined) this.#view.observe({ old: before, new: undefined });
        this.#leases.delete(publisher);
        if (!this.#absentSince.has(publisher)) this.#absentSince.set(publisher, nowMs);
        continue;
      }
      this.#absentSince.delete(publisher);
      this.#view.observe({ old: before, new: lease });
      this.#leases.set(publisher, lease);
    }
    return true;
  }

  /** Whether the reads showed the agent gone (never, for one not read yet). */
  gone(publisher: string, nowMs: number): boolean {
    const sighting = this.#view.get(publisher);
    if (sighting !== undefined) return !isAlive(sighting, nowMs);
    const since = this.#absentSince.get(publisher);
    return since !== undefined && nowMs - since >= LEASE_DURATION_SECONDS * 1000;
  }
}
