/**
 * The delete controller: for each PV key a worker takes from the "volumes"
 * queue, keep the protection finalizer right, and when the PV is Released
 * with reclaim policy Delete and lives on this node (in the cache, and again
 * in the API server's copy read right before), call DeleteVolume on this
 * node's driver, delete the PV object, then drop the finalizer.
 */
import type { Segments } from "../csi/types.ts";
import type {
  AttachmentLookup,
  ClassLookup,
  DeleteApi,
  DeleteCsi,
  DeleteMetrics,
  EventRecorder,
  VolumeLookup,
} from "./ports.ts";
import type { EventSubject } from "../model/events.ts";
import type { Logger } from "../log/logger.ts";
import { PV_PROTECTION_FINALIZER } from "../model/keys.ts";
import type { PersistentVolume } from "../model/objects.ts";
import { BoundedMap } from "../queue/bounded.ts";
import type { HandleOutcome } from "../queue/work/workers.ts";
import {
  confirmDelete,
  decideDelete,
  type DeletionSecret,
  finalizerChange,
  mayNeedDeleteWork,
} from "./decide.ts";

/** What the delete controller is given. */
interface DeleteControllerDeps {
  volumes: VolumeLookup;
  classes: ClassLookup;
  api: DeleteApi;
  csi: DeleteCsi;
  attachments?: AttachmentLookup;
  events: EventRecorder;
  metrics: DeleteMetrics;
  logger: Logger;
}

const DONE: HandleOutcome = { kind: "done" };
const RETRY: HandleOutcome = { kind: "retry" };
/** PVs remembered as refused: an evicted one is only counted again if refused again. */
export const REFUSED_LIMIT = 10_000;

function subjectOf(pv: PersistentVolume): EventSubject {
  return {
    kind: "PersistentVolume",
    apiVersion: "v1",
    name: pv.metadata.name,
    uid: pv.metadata.uid ?? "",
  };
}

/** Deletes this node's released volumes, one PV at a time. */
export class DeleteController {
  readonly #deps: DeleteControllerDeps;
  readonly #segment: Segments;
  /** PVs refused once (counted once each); bounded: a flood of such PVs costs no memory. */
  readonly #refused: BoundedMap<string, true>;
  /**
   * PVs (name → uid) whose volume this process deleted. Their next updates
   * (deletion started, finalizer still in the cache) must not call
   * DeleteVolume again; the entry goes when the PV leaves the cache.
   */
  readonly #deleted = new Map<string, string>();

  constructor(deps: DeleteControllerDeps, options: { segment: Segments; refusedLimit?: number }) {
    this.#deps = deps;
    this.#segment = options.segment;
    this.#refused = new BoundedMap(options.refusedLimit ?? REFUSED_LIMIT, deps.metrics.refusedSet);
  }

  /**
   * Whether a change of PV `name` (now `pv`, undefined once it is gone) can
   * give sync() anything to do; the informer's handler queues only those.
   * A PV whose volume this process deleted always can: its object is
   * removed next, and its memo goes with it.
   */
  wants(name: string, pv: PersistentVolume | undefined): boolean {
    if (this.#deleted.has(name)) return true;
    return pv !== undefined && mayNeedDeleteWork(pv);
  }

  /** The worker pool's handler for one PV name. */
  async sync(name: string, signal: AbortSignal): Promise<HandleOutcome> {
    const pv = this.#deps.volumes.get(name);
    if (pv === undefined) {
      this.#deleted.delete(name);
      return DONE;
    }
    if (this.#deleted.get(name) === pv.metadata.uid) return await this.#removeObject(pv, signal);
    const change = finalizerChange(pv);
    if (change !== "none") {
      const outcome = await this.#deps.api.patchFinalizer(name, change, signal);
      this.#deps.logger.debug({ pv: name, change, outcome }, "Protection finalizer updated");
      return DONE;
    }
    const storageClass = this.#deps.classes.get(pv.spec.storageClassName ?? "");
    const decision = decideDelete(pv, { segment: this.#segment, storageClass });
    switch (decision.kind) {
      case "ignore":
        this.#deps.logger.debug({ pv: name, reason: decision.reason }, "Volume not deleted");
        return DONE;
      case "refuse":
        this.#refuse(pv, decision.message);
        return DONE;
      case "problem":
        return this.#failed(pv, decision.message);
      case "delete":
        return await this.#delete(pv, decision, signal);
    }
  }

  #refuse(pv: PersistentVolume, message: string): void {
    const name = pv.metadata.name;
    this.#deps.logger.warn({ pv: name }, message);
    this.#deps.events.record({
      subject: subjectOf(pv),
      type: "Warning",
      reason: "VolumeDeleteRefused",
      message,
    });
    if (!this.#refused.has(name)) {
      this.#refused.set(name, true);
      this.#deps.metrics.refused("no-node-affinity");
    }
  }

  #failed(pv: PersistentVolume, message: string): HandleOutcome {
    this.#deps.logger.warn({ pv: pv.metadata.name }, message);
    this.#deps.events.record({
      subject: subjectOf(pv),
      type: "Warning",
      reason: "VolumeFailedDelete",
      message,
    });
    this.#deps.metrics.failed(pv.spec.storageClassName ?? "");
    return RETRY;
  }

  async #delete(
    pv: PersistentVolume,
    decision: { volumeId: string; secret: DeletionSecret; storageClassName: string },
    signal: AbortSignal,
  ): Promise<HandleOutcome> {
    const name = pv.metadata.name;
    const started = performance.now();
    const attachedTo = this.#deps.attachments?.attachedNode(name);
    if (attachedTo !== undefined) {
      return this.#failed(pv, `persistentvolume ${name} is still attached to node ${attachedTo}`);
    }
    const secrets = await this.#secrets(pv, decision.secret, signal);
    const confirmed = await this.#confirm(pv, decision, signal);
    if (confirmed.kind === "stop") return confirmed.outcome;
    const fresh = confirmed.pv;
    try {
      await this.#deps.csi.deleteVolume({ volume_id: decision.volumeId, secrets }, signal);
    } catch (error) {
      return this.#failed(fresh, (error as Error).message);
    }
    this.#deleted.set(name, fresh.metadata.uid ?? "");
    const seconds = (performance.now() - started) / 1000;
    this.#deps.metrics.deleted(decision.storageClassName, seconds);
    this.#refused.delete(name);
    this.#deps.logger.info({ pv: name, volumeId: decision.volumeId, seconds }, "Deleted volume");
    return await this.#removeObject(fresh, signal);
  }

  /**
   * Reads the PV from the API server right before DeleteVolume: the cache
   * may be behind (a stalled watch, a relist, a Retry-After wait), and a
   * volume deleted on a stale Delete that is now Retain is lost for good.
   */
  async #confirm(
    cached: PersistentVolume,
    decision: { volumeId: string; secret: DeletionSecret },
    signal: AbortSignal,
  ): Promise<{ kind: "go"; pv: PersistentVolume } | { kind: "stop"; outcome: HandleOutcome }> {
    const name = cached.metadata.name;
    let fresh: PersistentVolume | undefined;
    try {
      fresh = await this.#deps.api.readPersistentVolume(name, signal);
    } catch (error) {
      const message = `cannot read persistentvolume ${name} before deleting its volume: ${
        (error as Error).message
      }`;
      return { kind: "stop", outcome: this.#failed(cached, message) };
    }
    const storageClass = this.#deps.classes.get(fresh?.spec.storageClassName ?? "");
    const confirmation = confirmDelete(decision, fresh, { segment: this.#segment, storageClass });
    switch (confirmation.kind) {
      case "go":
        return { kind: "go", pv: fresh! };
      case "skip":
        this.#deps.logger.info(
          { pv: name, reason: confirmation.reason },
          "Volume no longer needs deletion, skipping",
        );
        return { kind: "stop", outcome: DONE };
      case "changed":
        this.#deps.logger.info(
          { pv: name, reason: confirmation.reason },
          "PV changed since the cache saw it: deciding again",
        );
        return { kind: "stop", outcome: RETRY };
    }
  }

  /**
   * After DeleteVolume: delete the PV object, then drop our finalizer. Also
   * what a retry (or a stale cache entry) of a deleted volume does, so that
   * DeleteVolume is never sent twice for it.
   */
  async #removeObject(pv: PersistentVolume, signal: AbortSignal): Promise<HandleOutcome> {
    const name = pv.metadata.name;
    if (pv.metadata.deletionTimestamp === undefined) {
      await this.#deps.api.deletePersistentVolume(name, signal);
    }
    if (pv.metadata.finalizers?.includes(PV_PROTECTION_FINALIZER) ?? true) {
      await this.#deps.api.patchFinalizer(name, "remove", signal);
    }
    return DONE;
  }

  /** A secret that cannot be read is reported, and the volume is deleted without it (as upstream). */
  async #secrets(
    pv: PersistentVolume,
    secret: DeletionSecret,
    signal: AbortSignal,
  ): Promise<Record<string, string>> {
    if (secret.kind === "none") return {};
    try {
      return await this.#deps.api.readSecretData(secret.secret, signal);
    } catch (error) {
      const { name, namespace } = secret.secret;
      const message =
        `cannot read the deletion secret ${namespace}/${name}: ${(error as Error).message}; ` +
        "deleting the volume without secrets";
      this.#deps.logger.warn({ pv: pv.metadata.name }, message);
      this.#deps.events.record({
        subject: subjectOf(pv),
        type: "Warning",
        reason: "DeletionSecretUnavailable",
        message,
      });
      return {};
    }
  }
}
