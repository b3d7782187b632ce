/**
 * The capacity publisher: the controller's work queue (one key per
 * StorageClass, so any number of refresh requests for a class while it waits
 * is one GetCapacity and at most one write), its workers, the poll, the
 * informer handlers, the refresh that refresh.ts calls after CreateVolume and
 * DeleteVolume, and readiness until every desired object was published once.
 */
import type { CacheChange } from "../../kube/informer/informer.ts";
import type { StorageClass } from "../../model/objects.ts";
import type { StorageCapacity } from "../../model/storage_capacity.ts";
import type { Logger } from "../../log/logger.ts";
import type { WorkQueue } from "../../queue/work/queue.ts";
import { type HandleOutcome, runWorkers } from "../../queue/work/workers.ts";
import { waitForSync } from "../../runtime/synced.ts";
import { sleep } from "../../runtime/sleep.ts";
import type { WriteEchoes } from "./echoes.ts";
import type { WatchedCache } from "../ports.ts";
import type { PoolRefresh } from "./refresh.ts";

/** The controller as the publisher drives it. */
export interface CapacitySyncer {
  sync(className: string, signal: AbortSignal): Promise<HandleOutcome>;
  desiredClasses(): string[];
  allKeys(): string[];
}

/** What the publisher is given. */
interface CapacityPublisherDeps {
  controller: CapacitySyncer;
  queue: WorkQueue;
  /** The StorageClass informer (shared with provisioning, run by its owner). */
  classes: WatchedCache<StorageClass>;
  /** This node's objects; run by the publisher. */
  objects: WatchedCache<StorageCapacity> & { run(signal: AbortSignal): Promise<void> };
  echoes: WriteEchoes;
  /** Readiness of the "capacity" condition. */
  ready?: (state: true | string) => void;
  /** Frees what the parts hold (the capacity client) once the publisher has stopped. */
  release?: () => void;
  logger: Logger;
}

/** How it runs. */
interface CapacityPublisherOptions {
  driverName: string;
  /** --capacity-threads */
  workers: number;
  /** --capacity-poll-interval */
  pollIntervalMs: number;
}

/** Publishes this node's CSIStorageCapacity objects until stopped. */
export class CapacityPublisher implements PoolRefresh {
  readonly #deps: CapacityPublisherDeps;
  readonly #options: CapacityPublisherOptions;
  /** Desired classes not yet published since start-up (readiness). */
  #unpublished: Set<string> | undefined;

  /** Registers the informer handlers: create it before the informers run. */
  constructor(deps: CapacityPublisherDeps, options: CapacityPublisherOptions) {
    this.#deps = deps;
    this.#options = options;
    deps.classes.onChange((change) => this.#onClassChange(change));
    deps.objects.onChange((change) => this.#onObjectChange(change));
  }

  /**
   * Every desired class, when the driver's pools may have changed: classes
   * may share a pool, and in node mode they all share the one segment.
   * Cheap: each class is one key in the queue.
   */
  refreshAll(): void {
    for (const className of this.#deps.controller.desiredClasses()) {
      this.#deps.queue.add(className);
    }
  }

  /** Runs the object informer, then the workers and the poll, until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const informer = this.#deps.objects.run(signal);
    try {
      if (!(await waitForSync([this.#deps.classes, this.#deps.objects], signal))) return;
      this.#unpublished = new Set(this.#deps.controller.desiredClasses());
      this.#updateReadiness();
      this.#deps.logger.notice(
        { storageClasses: [...this.#unpublished] },
        "Publishing CSIStorageCapacity for this node",
      );
      // The poll's first round is queued before a worker takes a key: one sync per class at start.
      const poll = this.#poll(signal);
      await Promise.all([
        runWorkers(this.#deps.queue, {
          workers: this.#options.workers,
          signal,
          logger: this.#deps.logger,
          handle: (key, workerSignal) => this.#handle(key, workerSignal),
        }),
        poll,
      ]);
    } finally {
      this.#deps.queue.shutDown();
      await informer;
      this.#deps.release?.();
    }
  }

  async #handle(className: string, signal: AbortSignal): Promise<HandleOutcome> {
    const outcome = await this.#deps.controller.sync(className, signal);
    if (outcome.kind === "done" && this.#unpublished?.delete(className)) this.#updateReadiness();
    return outcome;
  }

  #updateReadiness(): void {
    const left = [...(this.#unpublished ?? [])];
    if (left.length === 0) this.#deps.ready?.(true);
    else this.#deps.ready?.(`CSIStorageCapacity not yet published for ${left.join(", ")}`);
  }

  /** Every --capacity-poll-interval, starting now, as upstream's poll. */
  async #poll(signal: AbortSignal): Promise<void> {
    do {
      for (const key of this.#deps.controller.allKeys()) this.#deps.queue.add(key);
    } while (await sleep(this.#options.pollIntervalMs, signal));
  }

  #onClassChange(change: CacheChange<StorageClass>): void {
    const driver = this.#options.driverName;
    if (change.old?.provisioner === driver || change.new?.provisioner === driver) {
      this.#deps.queue.add(change.key);
    }
  }

  /** Someone else's change (not the echo of a write of ours) is work for its class. */
  #onObjectChange(change: CacheChange<StorageCapacity>): void {
    const classes = new Set(
      [change.old?.storageClassName, change.new?.storageClassName].filter((name) =>
        name !== undefined
      ),
    );
    for (const className of classes) {
      if (!this.#deps.echoes.observe(className)) this.#deps.queue.add(className);
    }
  }
}
