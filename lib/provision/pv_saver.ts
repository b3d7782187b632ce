/**
 * Saving PVs (upstream's volume store with CreateProvisionedPVLimiter): the
 * first POST happens in the claim worker; when it fails the PV is kept in
 * memory and retried in the background, forever, with backoff. The volume is
 * never deleted because its PV could not be saved. If the agent dies before
 * the PV is saved, the claim is still there and the next sync calls
 * CreateVolume again, which is idempotent by name.
 */
import type { Logger } from "../log/logger.ts";
import type { EventRecorder, ProvisionApi } from "./ports.ts";
import type { EventSubject } from "../model/events.ts";
import type { PersistentVolume } from "../model/objects.ts";
import type { WorkQueue } from "../queue/work_queue.ts";
import { type HandleOutcome, runWorkers } from "../queue/workers.ts";

interface Unsaved {
  pv: PersistentVolume;
  claim: EventSubject;
}

/** Upstream's DefaultThreadiness for the unsaved-PV queue. */
const SAVE_WORKERS = 4;

/** Saves PVs now or later. */
export class PvSaver {
  readonly #api: Pick<ProvisionApi, "createPersistentVolume">;
  readonly #events: EventRecorder;
  readonly #logger: Logger;
  readonly #queue: WorkQueue;
  readonly #unsaved = new Map<string, Unsaved>();

  constructor(deps: {
    api: Pick<ProvisionApi, "createPersistentVolume">;
    events: EventRecorder;
    logger: Logger;
    queue: WorkQueue;
  }) {
    this.#api = deps.api;
    this.#events = deps.events;
    this.#logger = deps.logger;
    this.#queue = deps.queue;
  }

  /** PVs waiting for a retry. */
  get pending(): number {
    return this.#unsaved.size;
  }

  /** Tries to save once; on failure the PV is queued for retries. */
  async save(
    pv: PersistentVolume,
    claim: EventSubject,
    signal?: AbortSignal,
  ): Promise<"saved" | "queued"> {
    const entry = { pv, claim };
    try {
      await this.#create(entry, signal);
      return "saved";
    } catch (error) {
      this.#logger.warn(
        { pv: pv.metadata.name, err: error },
        "Saving the PV failed; retrying in the background",
      );
      this.#unsaved.set(pv.metadata.name, entry);
      this.#queue.addRateLimited(pv.metadata.name);
      return "queued";
    }
  }

  /** Retries queued PVs until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    return runWorkers(this.#queue, {
      workers: SAVE_WORKERS,
      signal,
      logger: this.#logger,
      handle: (name, workerSignal) => this.#retry(name, workerSignal),
    });
  }

  async #retry(name: string, signal: AbortSignal): Promise<HandleOutcome> {
    const entry = this.#unsaved.get(name);
    if (entry === undefined) return { kind: "done" };
    try {
      await this.#create(entry, signal);
      this.#unsaved.delete(name);
      return { kind: "done" };
    } catch (error) {
      this.#logger.warn({ pv: name, err: error }, "Saving the PV failed again");
      return { kind: "retry", error };
    }
  }

  async #create(entry: Unsaved, signal?: AbortSignal): Promise<void> {
    const outcome = await this.#api.createPersistentVolume(entry.pv, signal);
    const name = entry.pv.metadata.name;
    this.#logger.info({ pv: name, outcome }, "PV saved");
    this.#events.record({
      subject: entry.claim,
      type: "Normal",
      reason: "ProvisioningSucceeded",
      message: `Successfully provisioned volume ${name}`,
    });
  }
}
