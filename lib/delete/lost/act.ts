/**
 * Carries out lostVolumeAction for lost volumes: a Released PV loses the
 * finalizer and is deleted (its UID the precondition); a claim whose class
 * opts in is deleted (its UID the precondition); every other one gets its
 * Warning Events once per PV for as long as this agent runs, so that a
 * volume seen every round makes no storm of Events.
 */
import type { Logger } from "../../log/logger.ts";
import type { PersistentVolume } from "../../model/objects.ts";
import { claimDeletedEvent, claimForbiddenEvent, releasedEvent, reportedEvents } from "./events.ts";
import type { LostMetrics } from "./metrics.ts";
import type { ClassLookup, EventRecorder, LostVolumeWrites } from "./ports.ts";
import { lostVolumeAction } from "./volumes.ts";

/** What the handler is given. */
export interface LostVolumeDeps {
  api: LostVolumeWrites;
  classes: ClassLookup;
  events: EventRecorder;
  metrics: LostMetrics;
  logger: Logger;
}

/** The handler; one per agent, so that what it reported is remembered. */
export class LostVolumeHandler {
  readonly #deps: LostVolumeDeps;
  readonly #reported = new Set<string>();
  readonly #claimsDone = new Set<string>();

  constructor(deps: LostVolumeDeps) {
    this.#deps = deps;
  }

  /**
   * Acts on each PV (`cause` says why it is lost; `reason` replaces
   * LostNodeVolume in the reports; without `release` every one is only
   * reported); returns how many are still on their way out (released now,
   * or their claim deleted), after which the caller looks again soon.
   */
  async handle(
    pvs: readonly PersistentVolume[],
    cause: string,
    signal: AbortSignal,
    options: { reason?: string; release?: boolean } = {},
  ): Promise<number> {
    const release = options.release ?? true;
    let moving = 0;
    for (const pv of pvs) {
      if (signal.aborted) break;
      let action = lostVolumeAction(pv, (name) => this.#deps.classes.get(name));
      if (!release && action.kind !== "none") action = { kind: "report" };
      if (action.kind === "report") this.#report(pv, cause, false, options.reason);
      if (action.kind === "release") await this.#release(pv, cause, signal);
      if (action.kind === "deleteClaim") {
        await this.#deleteClaim(pv, action.claim, cause, signal, options.reason);
      }
      if (action.kind === "release" || action.kind === "deleteClaim") moving++;
    }
    return moving;
  }

  async #release(pv: PersistentVolume, cause: string, signal: AbortSignal): Promise<void> {
    const { api } = this.#deps;
    const name = pv.metadata.name;
    if ((await api.patchFinalizer(name, "remove", signal)) === "gone") return;
    if ((await api.deletePersistentVolume(name, signal, pv.metadata.uid)) === "gone") return;
    this.#deps.metrics.volumes("released");
    const event = releasedEvent(pv, cause);
    this.#deps.logger.warn({ pv: name }, event.message);
    this.#deps.events.record(event);
  }

  #report(pv: PersistentVolume, cause: string, claimDeleted: boolean, reason?: string): void {
    const key = pv.metadata.uid ?? pv.metadata.name;
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.#deps.metrics.volumes("reported");
    const events = reportedEvents(pv, cause, {
      claimDeleted,
      ...(reason === undefined ? {} : { reason }),
    });
    this.#deps.logger.warn({ pv: pv.metadata.name }, events[0]!.message);
    for (const event of events) this.#deps.events.record(event);
  }

  async #deleteClaim(
    pv: PersistentVolume,
    claim: { namespace: string; name: string; uid: string },
    cause: string,
    signal: AbortSignal,
    reason?: string,
  ): Promise<void> {
    this.#report(pv, cause, true, reason);
    if (this.#claimsDone.has(claim.uid)) return;
    const result = await this.#deps.api.deleteClaim(claim, signal);
    this.#claimsDone.add(claim.uid);
    if (result === "gone") return;
    const event = result === "deleted"
      ? claimDeletedEvent(pv, cause)
      : claimForbiddenEvent(pv, result.forbidden);
    if (event === undefined) return;
    if (result === "deleted") this.#deps.metrics.volumes("claim_deleted");
    this.#deps.logger.warn({ pv: pv.metadata.name, claim: claim.name }, event.message);
    this.#deps.events.record(event);
  }
}
