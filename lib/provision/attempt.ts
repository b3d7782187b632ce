/**
 * One provisioning attempt for one claim: the steps before CreateVolume
 * (VolumeAttributesClass and Secret reads, the pure prepareProvision) and
 * after it (the PV, the cleanup of a too-small volume, saving, metrics).
 */
import type { CreateVolumeResponse } from "../csi/types.ts";
import type { Claim, StorageClass, VolumeAttributesClass } from "../model/objects.ts";
import {
  claimSubject,
  type ProvisionControllerDeps,
  type ProvisionControllerOptions,
  provisionLabels,
} from "./context.ts";
import { type Problem, problem } from "./outcome.ts";
import {
  buildPersistentVolume,
  orphanedVolumeMessage,
  type VolumeTooSmall,
  type VolumeWithoutContent,
} from "./pv/persistent_volume.ts";
import { prepareProvision, type ProvisionPlan } from "./request/request.ts";
import { secretReadError } from "../secrets/references.ts";
import { protectSource, releaseSnapshot } from "./source/protection.ts";
import { readClaimSourceFacts } from "./source/load.ts";

/** What an attempt is about. */
interface AttemptTarget {
  key: string;
  claim: Claim;
  storageClass: StorageClass;
}

/** Upstream's deleteVolumeRetryCount for a volume that came back too small. */
const CLEANUP_TRIES = 5;

/** Steps of one attempt; the controller decides what follows each. */
export class Attempt {
  readonly #deps: ProvisionControllerDeps;
  readonly #options: ProvisionControllerOptions;
  readonly #target: AttemptTarget;
  readonly #started = performance.now();

  constructor(
    deps: ProvisionControllerDeps,
    options: ProvisionControllerOptions,
    target: AttemptTarget,
  ) {
    this.#deps = deps;
    this.#options = options;
    this.#target = target;
  }

  /** Everything before CreateVolume; "ignore" for claims left to an external populator. */
  async prepare(signal: AbortSignal): Promise<ProvisionPlan | Problem | { kind: "ignore" }> {
    const { claim, storageClass } = this.#target;
    const vac = await this.#volumeAttributesClass(signal);
    if (vac?.kind === "problem") return vac;
    const source = await this.#sourceFacts(signal);
    const outcome = prepareProvision(
      { claim, storageClass, volumeAttributesClass: vac?.value, source },
      this.#options.prepare,
    );
    if (outcome.kind === "externalPopulator") {
      this.#deps.events.record({ subject: claimSubject(claim), ...outcome.event });
      return { kind: "ignore" };
    }
    if (outcome.kind === "problem") return outcome;
    for (const warning of outcome.warnings) {
      this.#deps.logger.warn({ claim: this.#target.key }, warning);
    }
    const withSecrets = await this.#withSecrets(outcome, signal);
    if (withSecrets.kind === "problem" || withSecrets.source === undefined) return withSecrets;
    const refused = await protectSource(withSecrets.source.source, {
      api: this.#deps.sources,
      snapshot: withSecrets.source.snapshot,
      logger: this.#deps.logger.child({ claim: this.#target.key }),
      signal,
    });
    return refused ?? withSecrets;
  }

  /** The facts about a snapshot or clone source, read before the pure checks. */
  #sourceFacts(signal: AbortSignal) {
    return readClaimSourceFacts(this.#target.claim, {
      api: this.#deps.sources,
      claims: this.#deps.api,
      volumes: this.#deps.caches.volumes,
    }, {
      crossNamespaceVolumeDataSource: this.#options.prepare.crossNamespaceVolumeDataSource,
      signal,
    });
  }

  /** The provisioner secret's data in the request. */
  async #withSecrets(plan: ProvisionPlan, signal: AbortSignal): Promise<ProvisionPlan | Problem> {
    const { storageClass } = this.#target;
    if (plan.provisionerSecret === null) return plan;
    try {
      const secrets = await this.#deps.api.readSecretData(plan.provisionerSecret, signal);
      return { ...plan, request: { ...plan.request, secrets } };
    } catch (error) {
      const message = secretReadError(plan.provisionerSecret, (error as Error).message, {
        parameters: storageClass.parameters,
        className: storageClass.metadata.name,
      });
      return problem(message, { state: "noChange" });
    }
  }

  async #volumeAttributesClass(
    signal: AbortSignal,
  ): Promise<{ kind: "found"; value: VolumeAttributesClass | undefined } | Problem | undefined> {
    const name = this.#target.claim.spec.volumeAttributesClassName;
    if (!this.#options.prepare.volumeAttributesClassEnabled || name === undefined || name === "") {
      return undefined;
    }
    try {
      return { kind: "found", value: await this.#deps.api.readVolumeAttributesClass(name, signal) };
    } catch (error) {
      return problem(`error getting VolumeAttributesClass ${name}: ${(error as Error).message}`, {
        state: "noChange",
      });
    }
  }

  /** The Normal "Provisioning" event, just before CreateVolume. */
  announce(): void {
    const { claim } = this.#target;
    this.#deps.events.record({
      subject: claimSubject(claim),
      type: "Normal",
      reason: "Provisioning",
      message:
        `External provisioner is provisioning volume for claim "${claim.metadata.namespace}/${claim.metadata.name}"`,
    });
  }

  /**
   * Builds and saves the PV for a successful CreateVolume. A problem means
   * "in background, retry"; "refused": the API server refused the PV, its
   * volume was deleted (a Warning says why), retry; "conflict": a PV of that
   * name holds another volume, ours was deleted, nothing more to do.
   */
  async finish(
    plan: ProvisionPlan,
    response: CreateVolumeResponse,
    signal: AbortSignal,
  ): Promise<Problem | { kind: "saved" | "refused" | "conflict" }> {
    const { claim, storageClass } = this.#target;
    const built = buildPersistentVolume(
      { plan, claim, storageClass, response },
      this.#options.persistentVolume,
    );
    if (built.kind === "problem") return built;
    if (built.kind === "tooSmall" || built.kind === "noContentSource") {
      return await this.#cleanUp(plan, built, signal);
    }
    const saved = await this.#deps.saver.save({
      pv: built.volume,
      claim: claimSubject(claim),
      claimKey: this.#target.key,
      secrets: plan.request.secrets,
    }, signal);
    if (saved === "refused" || saved === "conflict") return { kind: saved };
    if (plan.source?.source.kind === "snapshot") {
      await releaseSnapshot(plan.source.source, {
        api: this.#deps.sources,
        logger: this.#deps.logger.child({ claim: this.#target.key }),
        signal,
      });
    }
    const seconds = (performance.now() - this.#started) / 1000;
    this.#deps.metrics.succeeded(provisionLabels(claim, storageClass.metadata.name), seconds);
    this.#deps.logger.info({
      claim: this.#target.key,
      pv: built.volume.metadata.name,
      saved,
      seconds,
    }, "Provisioned volume");
    return { kind: "saved" };
  }

  /** DeleteVolume of an unusable volume, up to 5 tries within one --timeout. */
  async #cleanUp(
    plan: ProvisionPlan,
    unusable: VolumeTooSmall | VolumeWithoutContent,
    signal: AbortSignal,
  ): Promise<Problem> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.#options.timeoutMs);
    const deadline = AbortSignal.any([signal, timeout.signal]);
    let lastError = "";
    try {
      for (let attempt = 0; attempt < CLEANUP_TRIES && !deadline.aborted; attempt++) {
        try {
          await this.#deps.csi.deleteVolume({
            volume_id: unusable.volumeId,
            secrets: plan.request.secrets,
          }, deadline);
          this.#deps.journal.clear(plan.volumeName, "volume_deleted");
          return problem(unusable.message, { state: "inBackground" });
        } catch (error) {
          lastError = (error as Error).message;
        }
      }
    } finally {
      clearTimeout(timer);
    }
    const message = orphanedVolumeMessage(unusable.message, {
      volumeName: plan.volumeName,
      error: lastError,
    });
    return problem(message, { state: "inBackground" });
  }
}
