/**
 * The capacity controller: for each StorageClass name a worker takes from
 * the queue, ask the driver (GetCapacity), decide with planCapacityChanges,
 * and carry the plan out: removals first, then the create or update, each
 * within the capacity client's write budget, counted, and its echo expected;
 * then wait until the informer has delivered them all (publish/echoes.ts), so that
 * the next sync of the class starts from a cache that holds them. Every
 * outcome is returned to the worker pool as a value; nothing here loops or
 * sleeps on its own.
 */
import type { GetCapacityResponse, Segments } from "../csi/types.ts";
import type { Logger } from "../log/logger.ts";
import type { StorageClass } from "../model/objects.ts";
import type { NewStorageCapacity, StorageCapacity } from "../model/storage_capacity.ts";
import type { HandleOutcome } from "../queue/work/workers.ts";
import {
  desiredClassNames,
  type DesiredOptions,
  getCapacityRequest,
  isDesiredClass,
  observedCapacity,
} from "./plan/desired.ts";
import type { WriteEchoes } from "./publish/echoes.ts";
import { foreignWriteEvent, type ForeignWrites } from "./foreign_writes.ts";
import type { CapacitySyncMetrics } from "./metrics.ts";
import { describeOwner } from "./owner.ts";
import {
  type CapacityPlan,
  type CapacityRemoval,
  type CapacityWrite,
  planCapacityChanges,
} from "./plan/plan.ts";
import type {
  CapacityClient,
  CapacityCsi,
  CapacityObjects,
  CapacityOwner,
  ClassLookup,
  EventRecorder,
} from "./ports.ts";

/** What the controller is given. */
interface CapacityControllerDeps {
  classes: ClassLookup;
  objects: CapacityObjects;
  csi: CapacityCsi;
  /** The writes and their budget. */
  client: CapacityClient;
  /** Reads the owner to set, and confirms it before each create. */
  owner: CapacityOwner;
  echoes: WriteEchoes;
  metrics: CapacitySyncMetrics;
  logger: Logger;
  now?: () => number;
  /** This agent's last writes, to catch a second agent writing the same objects. */
  foreign?: ForeignWrites;
  /** Where a foreign write is reported (a Warning Event on the object). */
  events?: EventRecorder;
}

/** What it publishes. */
interface CapacityControllerOptions {
  desired: DesiredOptions;
  /** The node's segment, keys sorted. */
  segment: Segments;
  labels: Record<string, string>;
  /** How long a sync waits for the informer to deliver its writes. */
  echoTimeoutMs?: number;
}

/** One write of a plan: its class, the sync's signal, and the budget's next token. */
interface Write {
  className: string;
  signal: AbortSignal;
  take: () => Promise<boolean>;
}

type Planned = { kind: "plan"; plan: CapacityPlan } | { kind: "outcome"; outcome: HandleOutcome };

const DONE: HandleOutcome = { kind: "done" };
/** A wait for the write budget longer than this makes the capacity read again before writing. */
const STALE_AFTER_WAIT_MS = 10;
const DEFAULT_ECHO_TIMEOUT_MS = 5000;

/** Publishes one class at a time; the queue guarantees one worker per class. */
export class CapacityController {
  readonly #deps: CapacityControllerDeps;
  readonly #options: CapacityControllerOptions;
  /** Classes synced since start-up. */
  readonly #synced = new Set<string>();

  constructor(deps: CapacityControllerDeps, options: CapacityControllerOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  /** Classes that should have an object, sorted. */
  desiredClasses(): string[] {
    return desiredClassNames(this.#deps.classes.list(), this.#options.desired);
  }

  /** Every class with work to check: the desired ones and those that still have objects. */
  allKeys(): string[] {
    const keys = new Set(this.desiredClasses());
    for (const object of this.#deps.objects.list()) keys.add(object.storageClassName);
    return [...keys];
  }

  /** The worker pool's handler for one StorageClass name. */
  async sync(className: string, signal: AbortSignal): Promise<HandleOutcome> {
    const storageClass = this.#deps.classes.get(className);
    if (!isDesiredClass(storageClass, this.#options.desired)) {
      this.#deps.metrics.forget(className);
      this.#synced.delete(className);
      const plan = planCapacityChanges({ storageClassName: className, objects: this.#objects() });
      return await this.#apply(className, plan, { signal, tokenTaken: false });
    }
    let planned = await this.#observeAndPlan(storageClass, signal);
    if (planned.kind === "outcome") return planned.outcome;
    let tokenTaken = false;
    if (planned.plan.write !== undefined || planned.plan.removals.length > 0) {
      const now = this.#deps.now ?? Date.now;
      const asked = now();
      if (!(await this.#deps.client.budget.take("high", signal))) return DONE; // stopping
      tokenTaken = true;
      // Waited for the budget: what was read may be old by now; write what is true when sent.
      if (now() - asked > STALE_AFTER_WAIT_MS) {
        planned = await this.#observeAndPlan(storageClass, signal);
        if (planned.kind === "outcome") return planned.outcome;
      }
    }
    const held = this.#holdForeign(className, planned.plan);
    if (held !== undefined) return held;
    this.#noteAdoption(className, planned.plan);
    const outcome = await this.#apply(className, planned.plan, { signal, tokenTaken });
    if (outcome.kind === "done" && !signal.aborted) {
      this.#deps.metrics.published(className, (this.#deps.now ?? Date.now)());
    }
    return outcome;
  }

  /** GetCapacity, then the plan from the cache as it is after the answer (the freshest state). */
  async #observeAndPlan(storageClass: StorageClass, signal: AbortSignal): Promise<Planned> {
    const className = storageClass.metadata.name;
    let response: GetCapacityResponse;
    try {
      const request = getCapacityRequest(storageClass, this.#options.segment);
      response = await this.#deps.csi.getCapacity(request, signal);
    } catch (error) {
      if (signal.aborted) return { kind: "outcome", outcome: DONE };
      this.#deps.metrics.getCapacityFailed(className);
      this.#deps.logger.warn({ storageClass: className, err: error }, "CSI GetCapacity failed");
      return { kind: "outcome", outcome: { kind: "retry", error } };
    }
    const plan = planCapacityChanges({
      storageClassName: className,
      wanted: {
        segment: this.#options.segment,
        observed: observedCapacity(response),
        labels: this.#options.labels,
        owner: this.#deps.owner.current(),
      },
      objects: this.#objects(),
    });
    return { kind: "plan", plan };
  }

  /**
   * Removals first, then the write; then waits until the informer has
   * delivered them all. `tokenTaken`: the budget's token for the first write
   * was taken before the capacity was read.
   */
  async #apply(
    className: string,
    plan: CapacityPlan,
    context: { signal: AbortSignal; tokenTaken: boolean },
  ): Promise<HandleOutcome> {
    const { signal } = context;
    let held = context.tokenTaken;
    const take = async () => {
      if (!held) return await this.#deps.client.budget.take("high", signal);
      held = false;
      return true;
    };
    let outcome: HandleOutcome = DONE;
    for (const removal of plan.removals) {
      const result = await this.#remove({ className, signal, take }, removal);
      if (result.kind !== "done") outcome = result;
    }
    const write = plan.write;
    if (write !== undefined) {
      const result = write.kind === "create"
        ? await this.#create({ className, signal, take }, write.object)
        : await this.#update({ className, signal, take }, write);
      if (result.kind !== "done") outcome = result;
    }
    const timeoutMs = this.#options.echoTimeoutMs ?? DEFAULT_ECHO_TIMEOUT_MS;
    const arrived = await this.#deps.echoes.allArrived(className, { timeoutMs, signal });
    if (!arrived && !signal.aborted) {
      this.#deps.logger.warn(
        { storageClass: className },
        "The informer did not deliver a CSIStorageCapacity write in time",
      );
    }
    return outcome;
  }

  #remove(write: Write, removal: CapacityRemoval): Promise<HandleOutcome> {
    return this.#send(write, "delete", async () => {
      const result = await this.#deps.client.delete(removal, write.signal);
      this.#deps.foreign?.forget(removal.name);
      this.#deps.logger.info(
        { storageClass: write.className, object: removal.name, reason: removal.reason, result },
        "Deleted CSIStorageCapacity",
      );
      return result === "deleted";
    });
  }

  async #create(write: Write, object: NewStorageCapacity): Promise<HandleOutcome> {
    const { className, signal } = write;
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
    return await this.#send(write, "create", async () => {
      const created = await this.#deps.client.create(object, signal);
      this.#deps.foreign?.wrote(created.name, {
        capacity: object.capacity,
        ownerUid: object.metadata.ownerReferences?.[0]?.uid,
      });
      this.#deps.logger.info(
        { storageClass: className, object: created.name, capacity: object.capacity },
        "Created CSIStorageCapacity",
      );
      return true;
    });
  }

  async #update(
    write: Write,
    update: Extract<CapacityWrite, { kind: "update" }>,
  ): Promise<HandleOutcome> {
    let result: "updated" | "conflict" | "gone" = "updated";
    const outcome = await this.#send(write, "update", async () => {
      result = await this.#deps.client.update(update, write.signal);
      if (result === "updated") {
        this.#deps.foreign?.wrote(update.name, {
          capacity: update.change.capacity,
          ownerUid: this.#deps.owner.current()?.uid,
        });
      }
      return result === "updated";
    });
    this.#deps.logger.debug(
      { storageClass: write.className, object: update.name, reasons: update.reasons, result },
      `Updated CSIStorageCapacity: capacity ${update.change.capacity}`,
    );
    // A conflict means the cache is behind a change by someone else: its event requeues the class
    // at once; the backoff retry only covers an event that never comes. "gone" is the same.
    return result === "updated" ? outcome : { kind: "retry" };
  }

  /** One write: within the budget, counted, its echo expected, a failure turned into a retry. */
  async #send(
    write: Write,
    operation: "create" | "update" | "delete",
    send: () => Promise<boolean>,
  ): Promise<HandleOutcome> {
    const { className, signal } = write;
    if (!(await write.take())) return DONE; // stopping
    this.#deps.echoes.expect(className);
    this.#deps.metrics.wrote(className, operation);
    try {
      const changed = await send();
      if (!changed) this.#deps.echoes.cancel(className);
      return DONE;
    } catch (error) {
      this.#deps.echoes.cancel(className);
      if (signal.aborted) return DONE; // cut short by shutdown: not worth a warning
      this.#deps.logger.warn(
        { storageClass: className, operation, err: error },
        "CSIStorageCapacity write failed",
      );
      return { kind: "retry", error };
    }
  }

  #objects(): StorageCapacity[] {
    return this.#deps.objects.list().filter((object) =>
      object.metadata.deletionTimestamp === undefined
    );
  }

  /**
   * An object of ours overwritten by someone else since our last write: a
   * second agent for this node. Reported once per hold, then no write until
   * the hold ends (foreign_writes.ts).
   */
  #holdForeign(className: string, plan: CapacityPlan): HandleOutcome | undefined {
    const { foreign } = this.#deps;
    if (foreign === undefined || plan.write?.kind !== "update") return undefined;
    const current = plan.current;
    const verdict = foreign.verdict(className, current, (this.#deps.now ?? Date.now)());
    if (verdict.kind === "none" || current === undefined) return undefined;
    if (verdict.kind === "report") {
      const event = foreignWriteEvent(current, verdict);
      this.#deps.logger.warn(
        { storageClass: className, object: current.metadata.name },
        event.message,
      );
      this.#deps.metrics.foreignWrite?.(className);
      this.#deps.events?.record(event);
    }
    return { kind: "retryAfter", ms: verdict.ms };
  }

  /** Logs, once per class, an object found at start-up (written by a previous run or upstream). */
  #noteAdoption(className: string, plan: CapacityPlan): void {
    if (this.#synced.has(className)) return;
    this.#synced.add(className);
    const current = plan.current;
    if (current === undefined) return;
    this.#deps.logger.info(
      { storageClass: className, object: current.metadata.name, uid: current.metadata.uid },
      "Adopted existing CSIStorageCapacity",
    );
  }
}
