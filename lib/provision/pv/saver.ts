/**
 * Saving PVs (upstream's volume store with CreateProvisionedPVLimiter): the
 * first POST happens in the claim worker; when it fails for a reason that
 * may pass (no answer, 401, 403, 408, 429, 5xx) the PV is kept in memory and
 * retried in the background with backoff, and its volume is kept.
 *
 * Two answers end the save instead, and the volume is deleted so that it
 * does not leak (upstream retries the first forever without a word and takes
 * the second as success):
 * - any other 4xx (e.g. 422 for a label the API server rejects): this PV will
 *   never be accepted; a Warning names the field, and the claim is retried;
 * - a 409 for a PV of that name holding another volume, or the same handle
 *   on another node (made by another node's agent; drivers that make volume
 *   IDs from names give both the same handle): a Warning names both volumes.
 *
 * While the saver holds a PV, its claim is not provisioned again (the
 * controller asks holds()); a claim whose PV was refused in the background is
 * put back on the claim queue once its volume is deleted.
 *
 * A saved PV reaches the PV cache only when the informer's watch delivers it.
 * Upstream's provisionClaimOperation checks only that cache, so a claim synced
 * again in between (its key was queued again while CreateVolume ran) calls
 * CreateVolume a second time. Here the saver remembers each saved name for a
 * while (savedRecentlyMs) and the controller waits for the cache instead. The intent of the
 * volume is cleared from the journal once the PV is saved or the volume
 * deleted; if the agent dies before, the intent is settled at start-up.
 */
import type { Segments } from "../../csi/types.ts";
import type { Logger } from "../../log/logger.ts";
import { accessibilityOn, holdsThisNodesVolume } from "../../topology/affinity.ts";
import type { EventRecorder, Journal, ProvisionApi, ProvisionCsi } from "../ports.ts";
import type { EventSubject } from "../../model/events.ts";
import type { PersistentVolume } from "../../model/objects.ts";
import type { WorkQueue } from "../../queue/work/queue.ts";
import { type HandleOutcome, runWorkers } from "../../queue/work/workers.ts";
import { BoundedMap } from "../../queue/bounded.ts";

/** A PV to save, with what deleting its volume would take. */
interface Unsaved {
  pv: PersistentVolume;
  claim: EventSubject;
  /** "namespace/name", to retry the claim when its PV is refused. */
  claimKey: string;
  /** The provisioner secret's data, for DeleteVolume (kept in memory only). */
  secrets: Record<string, string>;
}

/** How a save ended: saved, retried in the background, or given up with the volume deleted. */
type SaveOutcome = "saved" | "queued" | "conflict" | "refused";

interface Pending extends Unsaved {
  /** Set once the save was given up: then DeleteVolume of its volume is what is retried. */
  gaveUp?: "refused" | "conflict";
}

/** Upstream's DefaultThreadiness for the unsaved-PV queue. */
const SAVE_WORKERS = 4;

/**
 * How long a saved PV's name is remembered: far longer than a watch takes to
 * deliver it. Past it (a stalled watch, or the PV deleted before the cache saw
 * it) the claim is provisioned again, which is idempotent: CreateVolume of the
 * same name returns the same volume and the PV POST answers 409 with it.
 */
export const SAVED_MEMORY_MS = 30_000;

/** The most saved names remembered: far more than one node saves in SAVED_MEMORY_MS. */
const SAVED_MEMORY_LIMIT = 10_000;

/** Saves PVs now or later. */
export class PvSaver {
  readonly #deps: PvSaverDeps;
  readonly #pending = new Map<string, Pending>();
  /** Saved PV names and when each was saved; the oldest first. */
  readonly #saved = new BoundedMap<string, number>(SAVED_MEMORY_LIMIT);
  readonly #now: () => number;

  constructor(deps: PvSaverDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  /** PVs waiting for a retry. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Whether this PV (and so its volume) is in the saver's hands. */
  holds(pvName: string): boolean {
    return this.#pending.has(pvName);
  }

  /** Milliseconds this PV, saved moments ago, may still take to reach the PV cache; 0 if not. */
  savedRecentlyMs(pvName: string): number {
    const savedAt = this.#saved.get(pvName);
    if (savedAt === undefined) return 0;
    return Math.max(0, savedAt + SAVED_MEMORY_MS - this.#now());
  }

  /** Tries to save once; on a failure that may pass the PV is queued for retries. */
  async save(unsaved: Unsaved, signal?: AbortSignal): Promise<SaveOutcome> {
    const entry: Pending = { ...unsaved };
    try {
      return await this.#attempt(entry, signal);
    } catch (error) {
      this.#deps.logger.warn(
        { pv: unsaved.pv.metadata.name, err: error },
        entry.gaveUp === undefined
          ? "Saving the PV failed; retrying in the background"
          : "Deleting the volume of a PV that is not saved failed; retrying in the background",
      );
      this.#pending.set(entry.pv.metadata.name, entry);
      this.#deps.queue.addRateLimited(entry.pv.metadata.name);
      return entry.gaveUp ?? "queued";
    }
  }

  /** Retries queued PVs until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    return runWorkers(this.#deps.queue, {
      workers: SAVE_WORKERS,
      signal,
      logger: this.#deps.logger,
      handle: (name, workerSignal) => this.#retry(name, workerSignal),
    });
  }

  async #retry(name: string, signal: AbortSignal): Promise<HandleOutcome> {
    const entry = this.#pending.get(name);
    if (entry === undefined) return { kind: "done" };
    try {
      const outcome = await this.#attempt(entry, signal);
      this.#pending.delete(name);
      // The first failure was a warning at -v=0; say at the same verbosity that it passed.
      if (outcome === "saved") this.#deps.logger.notice({ pv: name }, "PV saved after retrying");
      // The claim waited while the saver held its volume: provision it again now it is gone.
      if (entry.gaveUp === "refused") this.#deps.retryClaim(entry.claimKey);
      return { kind: "done" };
    } catch (error) {
      this.#deps.logger.warn({ pv: name, err: error }, "Saving the PV failed again");
      return { kind: "retry", error };
    }
  }

  /** One try: POST (or, once given up, DeleteVolume); throws what may pass. */
  async #attempt(entry: Pending, signal?: AbortSignal): Promise<SaveOutcome> {
    if (entry.gaveUp !== undefined) return await this.#deleteVolume(entry, signal);
    const name = entry.pv.metadata.name;
    const answer = await this.#deps.api.createPersistentVolume(entry.pv, signal);
    if (answer.kind === "rejected") {
      const at = answer.fields.length === 0 ? "" : ` at ${answer.fields.join(", ")}`;
      this.#giveUp(entry, "refused", {
        what: `PersistentVolume ${name} was refused by the API server (${answer.status} ` +
          `${answer.reason})${at}: ${answer.message}`,
      });
      return await this.#deleteVolume(entry, signal);
    }
    if (answer.kind === "exists") {
      if (answer.existing === undefined) throw new Error(`PV ${name} exists and is gone again`);
      const theirs = answer.existing.spec.csi;
      const ours = entry.pv.spec.csi;
      const held = holdsThisNodesVolume(answer.existing, {
        driverName: ours?.driver ?? "",
        volumeHandle: ours?.volumeHandle ?? "",
        segment: this.#deps.segment,
      });
      if (!held) {
        this.#giveUp(entry, "conflict", {
          what: `PersistentVolume ${name} already exists with volume ` +
            `${theirs?.volumeHandle ?? "(none)"} of driver ${theirs?.driver ?? "(none)"}` +
            `${elsewhere(answer.existing, this.#deps.segment)}, not volume ` +
            `${ours?.volumeHandle} that this node created for the claim`,
        });
        return await this.#deleteVolume(entry, signal);
      }
    }
    this.#deps.logger.info({ pv: name, outcome: answer.kind }, "PV saved");
    this.#deps.events.record({
      subject: entry.claim,
      type: "Normal",
      reason: "ProvisioningSucceeded",
      message: `Successfully provisioned volume ${name}`,
    });
    this.#deps.journal.clear(name, "pv_saved");
    this.#rememberSaved(name);
    return "saved";
  }

  #rememberSaved(name: string): void {
    const now = this.#now();
    // Every name is remembered as long, so the oldest expire first.
    this.#saved.dropOldestWhile((_name, savedAt) => savedAt + SAVED_MEMORY_MS <= now);
    this.#saved.set(name, now);
  }

  /** Deletes the volume of a PV that will not be saved; throws (for a retry) when it fails. */
  async #deleteVolume(entry: Pending, signal?: AbortSignal): Promise<SaveOutcome> {
    const name = entry.pv.metadata.name;
    const volumeId = entry.pv.spec.csi?.volumeHandle ?? "";
    await this.#deps.csi.deleteVolume({ volume_id: volumeId, secrets: entry.secrets }, signal);
    this.#deps.logger.notice(
      { pv: name, volumeId },
      "Deleted the volume of a PV that is not saved",
    );
    this.#deps.journal.clear(name, "volume_deleted");
    return entry.gaveUp ?? "refused";
  }

  /** The Warning for a save given up; the volume is deleted next. */
  #giveUp(entry: Pending, why: "refused" | "conflict", text: { what: string }): void {
    entry.gaveUp = why;
    const volume = entry.pv.spec.csi?.volumeHandle ?? "";
    const message = `${text.what}. The volume ${volume} is deleted` +
      (why === "refused" ? " and the claim retried" : "");
    this.#deps.logger.warn({ pv: entry.pv.metadata.name, claim: entry.claimKey }, message);
    this.#deps.events.record({
      subject: entry.claim,
      type: "Warning",
      reason: "ProvisioningFailed",
      message,
    });
  }
}

/** ", on another node" when the PV's node affinity places it elsewhere. */
function elsewhere(pv: PersistentVolume, segment: Segments | null): string {
  const { kind } = accessibilityOn(segment)(pv.spec.nodeAffinity);
  return kind === "notAccessible" ? " on another node" : "";
}

/** What a PvSaver is built from. */
interface PvSaverDeps {
  /** This node's topology segment: whose PV an existing PV of the same name is. */
  segment: Segments | null;
  api: Pick<ProvisionApi, "createPersistentVolume">;
  csi: Pick<ProvisionCsi, "deleteVolume">;
  journal: Pick<Journal, "clear">;
  events: EventRecorder;
  logger: Logger;
  queue: WorkQueue;
  /** Puts a claim back on the claim queue (its PV was refused in the background). */
  retryClaim: (key: string) => void;
  /** The clock (tests); Date.now by default. */
  now?: () => number;
}
