/**
 * Carries a capacity plan out: removals first, then the create or update,
 * each within the capacity client's write budget, counted, and its echo
 * expected; then waits until the informer has delivered them all (see
 * echoes.ts), so that the next sync of the class starts from a cache that
 * holds them.
 */
import type { NewStorageCapacity } from "../model/storage_capacity.ts";
import type { Logger } from "../log/logger.ts";
import type { HandleOutcome } from "../queue/workers.ts";
import type { WriteEchoes } from "./echoes.ts";
import type { CapacitySyncMetrics } from "./metrics.ts";
import { describeOwner } from "./owner.ts";
import type { CapacityPlan, CapacityRemoval } from "./plan.ts";
import type { CapacityApi, CapacityOwner, WriteBudget } from "./ports.ts";

/** Writes the budget was already taken for (the first of a plan), used before waiting again. */
export interface WriteSlots {
  held: number;
}

/** One plan's writes. */
export interface WriteContext {
  signal: AbortSignal;
  slots: WriteSlots;
}

/** What the writer is given. */
export interface CapacityWriterDeps {
  api: CapacityApi;
  owner: CapacityOwner;
  budget: WriteBudget;
  echoes: WriteEchoes;
  metrics: CapacitySyncMetrics;
  logger: Logger;
}

const DONE: HandleOutcome = { kind: "done" };
const DEFAULT_ECHO_TIMEOUT_MS = 5000;

/** Sends the writes of plans. */
export class CapacityWriter {
  readonly #deps: CapacityWriterDeps;
  readonly #echoTimeoutMs: number;

  constructor(deps: CapacityWriterDeps, options: { echoTimeoutMs?: number } = {}) {
    this.#deps = deps;
    this.#echoTimeoutMs = options.echoTimeoutMs ?? DEFAULT_ECHO_TIMEOUT_MS;
  }

  /** The write budget, for a caller that takes the first slot itself (see WriteSlots). */
  get budget(): WriteBudget {
    return this.#deps.budget;
  }

  /** Removals first, then the write; then waits until the informer has delivered them all. */
  async apply(
    className: string,
    plan: CapacityPlan,
    context: WriteContext,
  ): Promise<HandleOutcome> {
    const { signal } = context;
    let outcome: HandleOutcome = DONE;
    for (const removal of plan.removals) {
      const result = await this.#remove(className, removal, context);
      if (result.kind !== "done") outcome = result;
    }
    const write = plan.write;
    if (write !== undefined) {
      const result = write.kind === "create"
        ? await this.#create(className, write.object, context)
        : await this.#update(className, write, context);
      if (result.kind !== "done") outcome = result;
    }
    const settled = await this.#deps.echoes.settled(className, {
      timeoutMs: this.#echoTimeoutMs,
      signal,
    });
    if (!settled && !signal.aborted) {
      this.#deps.logger.warn(
        { storageClass: className },
        "The informer did not deliver a CSIStorageCapacity write in time",
      );
    }
    return outcome;
  }

  async #remove(
    className: string,
    removal: CapacityRemoval,
    context: WriteContext,
  ): Promise<HandleOutcome> {
    const { signal } = context;
    return await this.#write({ className, operation: "delete", context }, async () => {
      const result = await this.#deps.api.delete(removal, signal);
      this.#deps.logger.info(
        { storageClass: className, object: removal.name, reason: removal.reason, result },
        "Deleted CSIStorageCapacity",
      );
      return result === "deleted";
    });
  }

  async #create(
    className: string,
    object: NewStorageCapacity,
    context: WriteContext,
  ): Promise<HandleOutcome> {
    const { signal } = context;
    let confirmed: "ok" | "gone";
    try {
      confirmed = await this.#deps.owner.confirm(signal);
    } catch (error) {
      if (signal.aborted) return DONE;
      this.#deps.logger.warn({ err: error }, "Cannot read the owner of CSIStorageCapacity objects");
      return { kind: "retry", error };
    }
    if (confirmed === "gone") {
      const owner = this.#deps.owner.current();
      this.#deps.logger.warn(
        { storageClass: className, owner: owner === undefined ? "" : describeOwner(owner) },
        "The owner of the CSIStorageCapacity objects is gone: not creating one",
      );
      return { kind: "retry" };
    }
    return await this.#write({ className, operation: "create", context }, async () => {
      const created = await this.#deps.api.create(object, signal);
      this.#deps.logger.info(
        { storageClass: className, object: created.name, capacity: object.capacity },
        "Created CSIStorageCapacity",
      );
      return true;
    });
  }

  async #update(
    className: string,
    write: Extract<CapacityPlan["write"], { kind: "update" }>,
    context: WriteContext,
  ): Promise<HandleOutcome> {
    let result: "updated" | "conflict" | "gone" = "updated";
    const outcome = await this.#write({ className, operation: "update", context }, async () => {
      result = await this.#deps.api.update(write, context.signal);
      return result === "updated";
    });
    this.#deps.logger.debug(
      { storageClass: className, object: write.name, reasons: write.reasons, result },
      `Updated CSIStorageCapacity: capacity ${write.change.capacity}`,
    );
    // A conflict means the cache is behind a change by someone else: its event requeues the class
    // at once; the backoff retry only covers an event that never comes. "gone" is the same.
    return result === "updated" ? outcome : { kind: "retry" };
  }

  /** One write: within the budget, counted, its echo expected, a failure turned into a retry. */
  async #write(
    write: { className: string; operation: "create" | "update" | "delete"; context: WriteContext },
    send: () => Promise<boolean>,
  ): Promise<HandleOutcome> {
    const { className, operation, context } = write;
    if (context.slots.held > 0) context.slots.held--;
    else if (!(await this.#deps.budget.take(context.signal))) return DONE; // stopping
    this.#deps.echoes.expect(className);
    this.#deps.metrics.wrote(className, operation);
    try {
      const changed = await send();
      if (!changed) this.#deps.echoes.cancel(className);
      return DONE;
    } catch (error) {
      this.#deps.echoes.cancel(className);
      if (context.signal.aborted) return DONE; // cut short by shutdown: not worth a warning
      this.#deps.logger.warn(
        { storageClass: className, operation, err: error },
        "CSIStorageCapacity write failed",
      );
      return { kind: "retry", error };
    }
  }
}
