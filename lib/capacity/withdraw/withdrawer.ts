/**
 * The withdrawal loop: every few seconds, once every node's objects are
 * listed, it starts or stops the Lease watch (only a few agents watch; the
 * others read the watchers' Leases now and then, to take over when they are
 * gone); on a watcher, once the Leases are listed too, it asks decideWithdrawals,
 * reports the unattended nodes, and deletes the objects of those this agent
 * withdraws (each through the capacity client's budget, with its UID as
 * precondition, so that two agents never both count one object), then
 * records one Event per node.
 */
import type { Logger } from "../../log/logger.ts";
import { everyPeriod } from "../../runtime/sleep.ts";
import type { AgentsLiveness, CapacityClient, EventRecorder, PublishedObjects } from "../ports.ts";
import { livenessWatchers } from "../../liveness/watchers.ts";
import { decideWithdrawals, type Unattended, withdrawalEvent } from "./decide.ts";
import type { WithdrawMetrics } from "./metrics.ts";

/** What the loop is given. */
export interface WithdrawerDeps {
  agents: AgentsLiveness;
  objects: PublishedObjects;
  client: Pick<CapacityClient, "delete" | "budget">;
  events: EventRecorder;
  metrics: WithdrawMetrics;
  logger: Logger;
  now?: () => number;
}

/** What it is configured with. */
export interface WithdrawerOptions {
  /** This agent's managed-by value. */
  self: string;
  namespace: string;
  withdrawAfterMs: number;
  checkEveryMs: number;
}

/** Checks on a timer until stopped. */
export class CapacityWithdrawer {
  readonly #deps: WithdrawerDeps;
  readonly #options: WithdrawerOptions;
  #unleasedSince = new Map<string, number>();

  constructor(deps: WithdrawerDeps, options: WithdrawerOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  run(signal: AbortSignal): Promise<void> {
    return everyPeriod(
      this.#options.checkEveryMs,
      signal,
      (round) => this.check(round),
      (error) => {
        this.#deps.logger.warn({ err: error }, "Cannot withdraw the capacity of a gone agent");
      },
    );
  }

  /** One round: the Lease watch started or stopped; nothing more before both caches have synced. */
  async check(signal: AbortSignal): Promise<void> {
    const { agents, objects } = this.#deps;
    if (!objects.hasSynced()) return;
    const published = objects.list();
    const publishers = [...new Set(published.map((object) => object.publisher))];
    const nowMs = (this.#deps.now ?? Date.now)();
    const { self } = this.#options;
    const watchers = livenessWatchers(self, publishers, agents.gone(publishers, nowMs));
    const watching = watchers.includes(self);
    agents.watch(watching);
    if (!watching) {
      this.#unleasedSince = new Map();
      this.#deps.metrics.unattended(new Map());
      await agents.probe(watchers, signal);
      return;
    }
    if (!agents.hasSynced()) return;
    const decision = decideWithdrawals({
      nowMs,
      self,
      withdrawAfterMs: this.#options.withdrawAfterMs,
      watchers,
      agents: agents.agents(),
      objects: published,
      unleasedSince: this.#unleasedSince,
    });
    this.#unleasedSince = decision.unleasedSince;
    this.#deps.metrics.unattended(
      new Map(decision.unattended.map((gone) => [gone.node, gone.objects.length])),
    );
    for (const gone of decision.withdraw) {
      if (signal.aborted) return;
      await this.#withdraw(gone, signal);
    }
  }

  async #withdraw(gone: Unattended, signal: AbortSignal): Promise<void> {
    let withdrawn = 0;
    for (const object of gone.objects) {
      if (!(await this.#deps.client.budget.take("high", signal))) break;
      const result = await this.#deps.client.delete(object, signal);
      if (result === "deleted") withdrawn++;
    }
    if (withdrawn === 0) return;
    this.#deps.metrics.withdrawn(withdrawn);
    const event = withdrawalEvent(gone, { namespace: this.#options.namespace, withdrawn });
    this.#deps.logger.warn({ node: gone.node, objects: withdrawn }, event.message);
    this.#deps.events.record(event);
  }
}
