/**
 * The provisioning controller: for each claim key a worker takes from the
 * queue, load the claim and its class from the caches, decide with the pure
 * functions, and carry the decision out through the ports. Every outcome is
 * returned to the worker pool as a value (done, retry with backoff, retry
 * after a delay); nothing here loops or sleeps on its own.
 */
import { CsiError } from "../csi/status.ts";
import type { CreateVolumeResponse } from "../csi/types.ts";
import type { Claim, StorageClass } from "../model/objects.ts";
import type { HandleOutcome } from "../queue/workers.ts";
import { Attempt } from "./attempt.ts";
import { claimStorageClassName } from "./claim_class.ts";
import {
  claimSubject,
  DEFAULT_SLOW_RETRY_MS,
  type ProvisionControllerDeps,
  type ProvisionControllerOptions,
  provisionLabels,
} from "./context.ts";
import { decideClaim } from "./decide.ts";
import { InProgressClaims } from "./in_progress.ts";
import { makeVolumeName } from "./names.ts";
import { createVolumeProblem, type Problem } from "./outcome.ts";
import type { ProvisionPlan } from "./request.ts";
import { SlowSet } from "./slow_set.ts";

const DONE: HandleOutcome = { kind: "done" };
const RETRY: HandleOutcome = { kind: "retry" };

/** Decides and provisions claims, one key at a time. */
export class ProvisionController {
  readonly #deps: ProvisionControllerDeps;
  readonly #options: ProvisionControllerOptions;
  readonly #inProgress = new InProgressClaims();
  readonly #slow: SlowSet;

  constructor(deps: ProvisionControllerDeps, options: ProvisionControllerOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#slow = new SlowSet({
      retentionMs: options.slowRetryMs ?? DEFAULT_SLOW_RETRY_MS,
      ...(deps.metrics.slowSet ? { observer: deps.metrics.slowSet } : {}),
    });
  }

  /** Claims whose CreateVolume may still be running. */
  get inProgress(): number {
    return this.#inProgress.size;
  }

  /** The worker pool's handler for one claim key ("namespace/name"). */
  async sync(key: string, signal: AbortSignal): Promise<HandleOutcome> {
    const cached = this.#deps.caches.claims.get(key);
    const pending = this.#inProgress.get(key);
    if (pending !== undefined && cached?.metadata.uid !== pending.claim.metadata.uid) {
      return await this.#finishForGoneClaim(key, signal);
    }
    if (cached === undefined) return DONE;
    const storageClass = this.#deps.caches.classes.get(claimStorageClassName(cached));
    const decision = decideClaim({ claim: cached, storageClass }, this.#options.decide);
    switch (decision.kind) {
      case "ignore":
      case "immediateBinding":
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
    if (volumeName.ok && this.#deps.caches.volumes.get(volumeName.value) !== undefined) {
      this.#deps.logger.debug(
        { claim: key, pv: volumeName.value },
        "PV already exists, nothing to provision",
      );
      this.#inProgress.delete(key);
      return DONE;
    }
    const attempt = new Attempt(this.#deps, this.#options, { key, claim, storageClass });
    // As upstream's provisionClaimOperation: every attempt is announced, before
    // the checks that may refuse it, so the user sees it next to the Warning.
    attempt.announce();
    const prepared = await attempt.prepare(signal);
    if (prepared.kind !== "plan") {
      return prepared.kind === "problem"
        ? this.#report(claim, prepared, storageClass.metadata.name)
        : DONE;
    }
    let response: CreateVolumeResponse;
    try {
      response = await this.#deps.csi.createVolume(prepared.request, signal);
    } catch (error) {
      return await this.#createFailed({ key, claim, storageClass, plan: prepared }, error, signal);
    }
    const outcome = await attempt.finish(prepared, response, signal);
    if (outcome.kind === "problem") {
      this.#inProgress.set(key, { claim, request: prepared.request });
      return this.#report(claim, outcome, storageClass.metadata.name);
    }
    this.#inProgress.delete(key);
    this.#slow.forget(claim.metadata.uid);
    return DONE;
  }

  async #createFailed(
    failed: { key: string; claim: Claim; storageClass: StorageClass; plan: ProvisionPlan },
    error: unknown,
    signal: AbortSignal,
  ): Promise<HandleOutcome> {
    const { key, claim, storageClass, plan } = failed;
    const code = error instanceof CsiError ? error.codeName : "not a gRPC status";
    const message = error instanceof Error ? error.message : String(error);
    const problem = createVolumeProblem({ code, message }, {
      mayReschedule: this.#options.prepare.topologySupported,
    });
    if (problem.state === "inBackground") {
      this.#inProgress.set(key, { claim, request: plan.request });
    } else if (problem.state !== "noChange") this.#inProgress.delete(key);
    if (problem.retry === "slow") this.#slow.add(claim.metadata.uid, storageClass.metadata.uid);
    const outcome = this.#report(claim, problem, storageClass.metadata.name);
    if (problem.state !== "reschedule") return outcome;
    const removed = await this.#deps.api.removeSelectedNode(claim, signal);
    this.#deps.logger.info(
      { claim: key, removed },
      "Removed selected-node so that the scheduler picks again",
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

  /**
   * The claim was deleted (or replaced) while its CreateVolume was running in
   * the background. Ask once more with the same request: CreateVolume is
   * idempotent, and its answer names the volume, which is then deleted.
   */
  async #finishForGoneClaim(key: string, signal: AbortSignal): Promise<HandleOutcome> {
    const pending = this.#inProgress.get(key);
    if (pending === undefined) return DONE;
    const { namespace, name, uid } = pending.claim.metadata;
    const current = await this.#deps.api.readClaim({ namespace, name }, signal);
    if (current?.metadata.uid === uid) return { kind: "retryAfter", ms: 1000 }; // the cache is behind
    const log = this.#deps.logger.child({ claim: key, volume: pending.request.name });
    let response: CreateVolumeResponse;
    try {
      response = await this.#deps.csi.createVolume(pending.request, signal);
    } catch (error) {
      const code = error instanceof CsiError ? error.codeName : "not a gRPC status";
      const state =
        createVolumeProblem({ code, message: String(error) }, { mayReschedule: false }).state;
      if (state === "inBackground") return RETRY;
      log.info({ code }, "Claim is gone and CreateVolume failed for good: no volume to clean up");
      this.#inProgress.delete(key);
      return DONE;
    }
    const volumeId = response.volume?.volume_id ?? "";
    if (volumeId !== "") {
      await this.#deps.csi.deleteVolume(
        { volume_id: volumeId, secrets: pending.request.secrets },
        signal,
      );
      log.notice(
        { volumeId },
        "Claim was deleted while its volume was being created: volume deleted",
      );
    }
    this.#inProgress.delete(key);
    return DONE;
  }
}
