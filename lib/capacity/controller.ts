/**
 * The capacity controller: for each StorageClass name a worker takes from
 * the queue, ask the driver (GetCapacity), decide with planCapacityChanges,
 * and have the writer carry the plan out. Every outcome is returned to the
 * worker pool as a value; nothing here loops or sleeps on its own.
 */
import type { GetCapacityResponse, Segments } from "../csi/types.ts";
import type { StorageClass } from "../model/objects.ts";
import type { StorageCapacity } from "../model/storage_capacity.ts";
import type { Logger } from "../log/logger.ts";
import type { HandleOutcome } from "../queue/workers.ts";
import {
  desiredClassNames,
  type DesiredOptions,
  getCapacityRequest,
  isDesiredClass,
  observedCapacity,
} from "./desired.ts";
import type { CapacityCounts, CapacitySyncMetrics } from "./metrics.ts";
import { type CapacityPlan, planCapacityChanges } from "./plan.ts";
import type { CapacityCsi, CapacityObjectCache, CapacityOwner, ClassLookup } from "./ports.ts";
import { selectsSegment } from "./segment.ts";
import type { CapacityWriter, WriteSlots } from "./writer.ts";

/** What the controller is given. */
export interface CapacityControllerDeps {
  classes: ClassLookup;
  objects: CapacityObjectCache;
  csi: CapacityCsi;
  /** Reads the owner to set. */
  owner: CapacityOwner;
  /** Carries plans out. */
  writer: CapacityWriter;
  metrics: CapacitySyncMetrics;
  logger: Logger;
  now?: () => number;
}

/** What it publishes. */
export interface CapacityControllerOptions {
  desired: DesiredOptions;
  /** The node's segment, keys sorted. */
  segment: Segments;
  labels: Record<string, string>;
}

const DONE: HandleOutcome = { kind: "done" };
/** A wait for the write budget longer than this makes the capacity read again before writing. */
const STALE_AFTER_WAIT_MS = 10;

type Planned = { kind: "plan"; plan: CapacityPlan } | { kind: "outcome"; outcome: HandleOutcome };

/** Publishes one class at a time; the queue guarantees one worker per class. */
export class CapacityController implements CapacityCounts {
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
      const plan = planCapacityChanges({ storageClassName: className, objects: this.#objects() });
      return await this.#deps.writer.apply(className, plan, { signal, slots: { held: 0 } });
    }
    let planned = await this.#observeAndPlan(storageClass, signal);
    if (planned.kind === "outcome") return planned.outcome;
    const slots: WriteSlots = { held: 0 };
    if (planned.plan.write !== undefined || planned.plan.removals.length > 0) {
      const now = this.#deps.now ?? Date.now;
      const asked = now();
      if (!(await this.#deps.writer.budget.take(signal))) return DONE; // stopping
      slots.held = 1;
      // Waited for the budget: what was read may be old by now; write what is true when sent.
      if (now() - asked > STALE_AFTER_WAIT_MS) {
        planned = await this.#observeAndPlan(storageClass, signal);
        if (planned.kind === "outcome") return planned.outcome;
      }
    }
    this.#noteAdoption(className, planned.plan);
    const outcome = await this.#deps.writer.apply(className, planned.plan, { signal, slots });
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

  goal(): number {
    return this.desiredClasses().length;
  }

  current(): number {
    const live = this.#objects();
    return this.desiredClasses().filter((className) =>
      live.some((object) => this.#stands(object, className))
    ).length;
  }

  obsolete(): number {
    const desired = new Set(this.desiredClasses());
    return this.#objects().filter((object) =>
      !desired.has(object.storageClassName) || !this.#stands(object, object.storageClassName)
    ).length;
  }

  #objects(): StorageCapacity[] {
    return this.#deps.objects.list().filter((object) =>
      object.metadata.deletionTimestamp === undefined
    );
  }

  #stands(object: StorageCapacity, className: string): boolean {
    return object.storageClassName === className &&
      selectsSegment(object.nodeTopology, this.#options.segment);
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
