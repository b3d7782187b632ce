/**
 * The provisioning controller: for each claim key a worker takes from the
 * queue, load the claim and its class from the caches, decide with the pure
 * functions, and carry the decision out through the ports. Every outcome is
 * returned to the worker pool as a value (done, retry with backoff, retry
 * after a delay); nothing here loops or sleeps on its own.
 *
 * Every CreateVolume is preceded by its intent in the journal. A key's sync
 * first settles the intents of that key that its claim no longer needs (the
 * claim is gone, replaced by a new one of the same name, bound or moved), so
 * that a volume made for an old claim is deleted and a new claim of the same
 * name is provisioned in the same pass.
 */
import { CsiError } from "../csi/status.ts";
import type { CreateVolumeResponse } from "../csi/types.ts";
import type { Claim, StorageClass } from "../model/objects.ts";
import type { HandleOutcome } from "../queue/work/workers.ts";
import { Attempt } from "./attempt.ts";
import { BackgroundCalls } from "./intent/background_calls.ts";
import { claimStorageClassName } from "../model/claim_class.ts";
import {
  claimSubject,
  DEFAULT_SLOW_RETRY_MS,
  type ProvisionControllerDeps,
  type ProvisionControllerOptions,
  provisionLabels,
} from "./context.ts";
import { decideClaim } from "./decide.ts";
import { type Intent, intentFate, makeIntent } from "./intent/intent.ts";
import { makeVolumeName } from "./request/volume_name.ts";
import { createVolumeProblem, type Problem, problem as makeProblem } from "./outcome.ts";
import { explainSourceMiss } from "./source/plan.ts";
import type { ProvisionPlan } from "./request/request.ts";
import { leavesNoVolume, Settler } from "./intent/settle.ts";
import { SlowSet } from "./slow_set.ts";
import { SourceMisses } from "./source/misses.ts";

const DONE: HandleOutcome = { kind: "done" };
const RETRY: HandleOutcome = { kind: "retry" };

/** Decides and provisions claims, one key at a time. */
export class ProvisionController {
  readonly #deps: ProvisionControllerDeps;
  readonly #options: ProvisionControllerOptions;
  readonly #slow: SlowSet;
  readonly #settler: Settler;
  readonly #misses: SourceMisses;
  readonly #background: BackgroundCalls;

  constructor(deps: ProvisionControllerDeps, options: ProvisionControllerOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#slow = new SlowSet({
      retentionMs: options.slowRetryMs ?? DEFAULT_SLOW_RETRY_MS,
      ...(deps.metrics.slowSet ? { observer: deps.metrics.slowSet } : {}),
    });
    this.#background = new BackgroundCalls(deps.journal);
    this.#settler = new Settler({
      ...deps,
      classes: deps.caches.classes,
      background: this.#background,
      saverHolds: (pvName) => deps.saver.holds(pvName),
    }, { driverName: options.decide.driverName, segment: options.prepare.segment });
    this.#misses = new SourceMisses({
      retentionMs: options.slowRetryMs ?? DEFAULT_SLOW_RETRY_MS,
      ...(deps.metrics.sourceMisses ? { observer: deps.metrics.sourceMisses } : {}),
    });
  }

  /** Intents in the journal: CreateVolume calls whose volume has no PV and was not deleted. */
  get inProgress(): number {
    return this.#deps.journal.size;
  }

  /** The worker pool's handler for one claim key ("namespace/name"). */
  async sync(key: string, signal: AbortSignal): Promise<HandleOutcome> {
    const cached = this.#deps.caches.claims.get(key);
    const leftovers = await this.#settleLeftovers(key, cached, signal);
    if (cached === undefined) return leftovers;
    const outcome = await this.#syncClaim(key, cached, signal);
    return outcome.kind === "retry" || leftovers.kind === "done" ? outcome : leftovers;
  }

  /**
   * Settles the key's intents that its claim no longer needs. Without the
   * claim in the cache, the API server says what became of it (one read);
   * if it is still this node's to provision, the cache is behind and the key
   * is retried with backoff (the watch brings the claim meanwhile).
   */
  async #settleLeftovers(
    key: string,
    cached: Claim | undefined,
    signal: AbortSignal,
  ): Promise<HandleOutcome> {
    const intents = this.#deps.journal.entriesOf(key);
    if (intents.length === 0) return DONE;
    let outcome = DONE;
    try {
      const claim = cached ?? await this.#deps.api.readClaim(intents[0]!.claim, signal);
      for (const intent of intents) {
        if (intentFate(intent, claim, this.#options.decide) === "keep") {
          if (cached === undefined) outcome = RETRY;
        } else {
          const same = claim?.metadata.uid === intent.claim.uid ? claim : undefined;
          if (await this.#settler.settle(intent, signal, same) === "retry") outcome = RETRY;
        }
      }
    } catch (error) {
      this.#deps.logger.warn({ claim: key, err: error }, "Settling journaled volumes failed");
      return { kind: "retry", error };
    }
    return outcome;
  }

  async #syncClaim(key: string, cached: Claim, signal: AbortSignal): Promise<HandleOutcome> {
    const storageClass = this.#deps.caches.classes.get(claimStorageClassName(cached));
    const decision = decideClaim({ claim: cached, storageClass }, this.#options.decide);
    switch (decision.kind) {
      case "immediateBinding":
        if (this.#deps.race !== undefined) {
          const target = { key, claim: cached, storageClass: decision.storageClass };
          return await this.#deps.race.consider(target, signal);
        }
        this.#deps.logger.debug({ claim: key, reason: decision.reason }, "No race runs");
        return DONE;
      case "ignore":
        this.#deps.logger.debug(
          { claim: key, decision: decision.kind, reason: decision.reason },
          "Claim ignored",
        );
        return DONE;
      case "problem":
        return this.#report(cached, decision, claimStorageClassName(cached));
      case "provision":
        return await this.#provision(
          key,
          { claim: cached, storageClass: decision.storageClass },
          signal,
        );
    }
  }

  async #provision(
    key: string,
    target: { claim: Claim; storageClass: StorageClass },
    signal: AbortSignal,
  ): Promise<HandleOutcome> {
    const { claim, storageClass } = target;
    const missed = this.#misses.recall(claim.metadata.uid);
    if (missed !== undefined) {
      return await this.#reschedule(claim, missed, storageClass, signal);
    }
    const wait = this.#slow.remainingMs(claim.metadata.uid, storageClass.metadata.uid);
    if (wait > 0) {
      this.#deps.logger.info(
        { claim: key },
        `skipping volume provisioning for pvc ${key}, because provisioning previously failed with infeasible error`,
      );
      return { kind: "retryAfter", ms: wait };
    }
    const volumeName = makeVolumeName(claim.metadata.uid, {
      prefix: this.#options.prepare.volumeNamePrefix,
      uuidLength: this.#options.prepare.volumeNameUuidLength,
    });
    const underway = volumeName.ok ? this.#underway(key, volumeName.value) : undefined;
    if (underway !== undefined) return underway;
    const attempt = new Attempt(this.#deps, this.#options, { key, claim, storageClass });
    // As upstream's provisionClaimOperation: every attempt is announced, before
    // the checks that may refuse it, so the user sees it next to the Warning.
    attempt.announce();
    const prepared = await attempt.prepare(signal);
    if (prepared.kind === "problem" && prepared.state === "reschedule") {
      // The data source lives on another node (source/plan.ts).
      this.#misses.remember(claim.metadata.uid, prepared);
      return await this.#reschedule(claim, prepared, storageClass, signal);
    }
    if (prepared.kind !== "plan") {
      return prepared.kind === "problem"
        ? this.#report(claim, prepared, storageClass.metadata.name)
        : DONE;
    }
    const recorded = await this.#recordIntent(claim, { storageClass, plan: prepared });
    if (recorded !== undefined) return this.#report(claim, recorded, storageClass.metadata.name);
    let response: CreateVolumeResponse;
    try {
      response = await this.#deps.csi.createVolume(prepared.request, signal);
    } catch (error) {
      this.#endIntentOnFailure(prepared.volumeName, error);
      return await this.#createFailed({ key, claim, storageClass, plan: prepared }, error, signal);
    }
    this.#deps.race?.answered(key, claim.metadata.uid);
    const outcome = await attempt.finish(prepared, response, signal);
    if (outcome.kind === "problem") return this.#report(claim, outcome, storageClass.metadata.name);
    if (outcome.kind === "refused") {
      this.#deps.metrics.failed(provisionLabels(claim, storageClass.metadata.name));
      return RETRY;
    }
    this.#slow.forget(claim.metadata.uid);
    return DONE;
  }

  /**
   * A failed CreateVolume ends its intent when the driver made no volume,
   * unless an earlier call of the volume went to the background and may
   * still make it.
   */
  #endIntentOnFailure(volumeName: string, error: unknown): void {
    this.#background.noteFailure(volumeName, error);
    if (!leavesNoVolume(error)) return;
    if (this.#background.mayStillRun(volumeName)) {
      this.#deps.logger.info(
        { pv: volumeName, err: error },
        "CreateVolume failed, but an earlier call went to the background and may still " +
          "make the volume: its intent is kept until the volume is settled",
      );
      return;
    }
    this.#deps.journal.clear(volumeName, "no_volume");
  }

  /** What to do instead of provisioning when the claim's PV exists or is being saved. */
  #underway(key: string, pvName: string): HandleOutcome | undefined {
    if (this.#deps.caches.volumes.get(pvName) !== undefined) {
      this.#deps.logger.debug(
        { claim: key, pv: pvName },
        "PV already exists, nothing to provision",
      );
      return DONE;
    }
    if (this.#deps.saver.holds(pvName)) {
      // It saves the PV (the claim then binds) or deletes the volume and queues the claim again.
      this.#deps.logger.debug({ claim: key, pv: pvName }, "PV is with the PV saver");
      return DONE;
    }
    const saving = this.#deps.saver.savedRecentlyMs(pvName);
    if (saving > 0) {
      // Saved moments ago, not yet in the PV cache: wait for it rather than create again.
      this.#deps.logger.debug({ claim: key, pv: pvName }, "PV saved, awaiting the PV cache");
      return { kind: "retryAfter", ms: saving };
    }
    return undefined;
  }

  /** Writes the intent before CreateVolume; a problem when it cannot be written. */
  async #recordIntent(
    claim: Claim,
    made: { storageClass: StorageClass; plan: ProvisionPlan },
  ): Promise<Problem | undefined> {
    const { plan } = made;
    const earlier = this.#deps.journal.get(plan.volumeName);
    const intent: Intent = makeIntent(claim, {
      className: made.storageClass.metadata.name,
      provisionerSecret: plan.provisionerSecret,
    }, { request: plan.request, now: new Date() });
    if (earlier !== undefined) intent.since = earlier.since;
    try {
      await this.#deps.journal.record(intent);
      return undefined;
    } catch (error) {
      return makeProblem(
        `not creating volume ${plan.volumeName}: its intent could not be written to the journal ` +
          `(${(error as Error).message})`,
        { state: "noChange" },
      );
    }
  }

  async #createFailed(
    failed: { key: string; claim: Claim; storageClass: StorageClass; plan: ProvisionPlan },
    error: unknown,
    signal: AbortSignal,
  ): Promise<HandleOutcome> {
    const { claim, storageClass, plan } = failed;
    const code = error instanceof CsiError ? error.codeName : "not a gRPC status";
    const message = error instanceof Error ? error.message : String(error);
    const miss = explainSourceMiss({ code, message }, plan, this.#options.prepare);
    if (miss !== undefined) {
      this.#misses.remember(claim.metadata.uid, miss);
      return await this.#reschedule(claim, miss, storageClass, signal);
    }
    const problem = createVolumeProblem({ code, message }, {
      mayReschedule: this.#options.prepare.topologySupported,
    });
    if (problem.retry === "slow") this.#slow.add(claim.metadata.uid, storageClass.metadata.uid);
    if (problem.state === "reschedule") {
      return await this.#reschedule(claim, problem, storageClass, signal);
    }
    return this.#report(claim, problem, storageClass.metadata.name);
  }

  /**
   * The Warning, then selected-node is removed: a WaitForFirstConsumer claim
   * goes back to the scheduler, an Immediate claim this node raced for goes
   * back to the race.
   */
  async #reschedule(
    claim: Claim,
    problem: Problem,
    storageClass: StorageClass,
    signal: AbortSignal,
  ): Promise<HandleOutcome> {
    this.#report(claim, problem, storageClass.metadata.name);
    const raced = storageClass.volumeBindingMode !== "WaitForFirstConsumer";
    if (raced) this.#deps.race?.released(claim.metadata.uid);
    const removed = await this.#deps.api.removeSelectedNode(claim, signal);
    this.#deps.logger.info(
      { claim: `${claim.metadata.namespace}/${claim.metadata.name}`, removed },
      `Removed selected-node so that ${
        raced ? "the nodes race again" : "the scheduler picks again"
      }`,
    );
    return removed === "conflict" ? RETRY : DONE;
  }

  /** A Warning event and the retry the problem asks for. */
  #report(claim: Claim, problem: Problem, className: string): HandleOutcome {
    const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
    this.#deps.logger.warn({ claim: key, state: problem.state }, problem.message);
    this.#deps.events.record({
      subject: claimSubject(claim),
      type: "Warning",
      reason: problem.reason,
      message: problem.message,
    });
    this.#deps.metrics.failed(provisionLabels(claim, className));
    if (problem.retry === "slow") {
      return { kind: "retryAfter", ms: this.#options.slowRetryMs ?? DEFAULT_SLOW_RETRY_MS };
    }
    return RETRY;
  }
}
