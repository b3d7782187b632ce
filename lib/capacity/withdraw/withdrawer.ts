/**
 * The withdrawal loop: every few seconds, once both caches have synced, it
 * reads the Leases' view and every node's objects, asks decideWithdrawals,
 * reports the unattended nodes, and deletes the objects of those this agent
 * withdraws (each through the capacity client's budget, with its UID as
 * precondition, so that two agents never both count one object), then
 * records one Event per node.
 */
import type { Logger } from "../../log/logger.ts";
import { sleep } from "../../runtime/sleep.ts";
import type { AgentsLiveness, CapacityClient, EventRecorder, PublishedObjects } from "../ports.ts";
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

  async run(signal: AbortSignal): Promise<void> {
    while (await sleep(this.#options.checkEveryMs, signal)) {
      try {
        await this.check(signal);
      } catch (error) {
        if (signal.aborted) return;
        this.#deps.logger.warn({ err: error }, "Cannot withdraw the capacity of a gone agent");
      }
    }
  }

  /** One round; nothing before both caches have synced. */
  async check(signal: AbortSignal): Promise<void> {
    const { agents, objects } = this.#deps;
    if (!agents.hasSynced() || !objects.hasSynced()) return;
    const nowMs = (this.#deps.now ?? Date.now)();
    const decision = decideWithdrawals({
      nowMs,
      self: this.#options.self,
      withdrawAfterMs: this.#options.withdrawAfterMs,
      agents: agents.agents(),
      objects: objects.list(),
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
