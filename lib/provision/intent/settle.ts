/**
 * Settling an intent whose claim no longer needs it (gone, replaced under
 * the same name, bound elsewhere, moved to another node): make sure no volume
 * is left behind. The PV of that name is read first: if it holds this
 * node's volume, the volume is the PV's (the delete path deletes it when the
 * PV is released), and asking CreateVolume again could re-create a volume
 * the delete path has just removed. Otherwise (no PV, or another node's PV
 * of the same name: drivers that make volume IDs from names give it the same
 * handle) CreateVolume is asked again with the journaled request (idempotent
 * by name: it returns the volume if the driver made it, or makes it now),
 * the volume is deleted, and the intent cleared.
 *
 * Secrets: the journal holds only the provisioner Secret's reference, as
 * resolved when the request was made. It is read again here. If it cannot
 * be read and the StorageClass still exists and names another Secret now
 * (a rotated secret), that one is tried. When every Secret tried does not
 * exist (deleted, or its namespace deleted), the volume is deleted without
 * secrets, as the delete path does for a PV, and a Warning says so. Any
 * other failure (API server away, Forbidden) keeps the intent for a retry:
 * a volume is never abandoned because its credentials cannot be read now.
 */
import { CsiError, type GrpcCodeName } from "../../csi/status.ts";
import type { CreateVolumeResponse, Segments } from "../../csi/types.ts";
import type { Logger } from "../../log/logger.ts";
import type { Claim, SecretReference, StorageClass } from "../../model/objects.ts";
import { resolveSecretReference } from "../../secrets/references.ts";
import { holdsThisNodesVolume } from "../../topology/affinity.ts";
import type { BackgroundCalls } from "./background_calls.ts";
import { claimSubject } from "../context.ts";
import { type Intent, intentKey } from "./intent.ts";
import type { EventRecorder, Journal, Lookup, ProvisionApi, ProvisionCsi } from "../ports.ts";

/**
 * CreateVolume failures after which no volume exists: the CSI spec's
 * CreateVolume errors that mean the request cannot be served (InvalidArgument,
 * NotFound: a missing source, ResourceExhausted, OutOfRange: an unsupported
 * capacity) and a driver without CreateVolume. After any other failure
 * (Internal, Unknown, a timeout, AlreadyExists...) the driver may have made
 * the volume, so its intent stays; so does it after these when an earlier
 * call went to the background (background_calls.ts).
 */
const NO_VOLUME_CODES: readonly GrpcCodeName[] = [
  "InvalidArgument",
  "NotFound",
  "ResourceExhausted",
  "OutOfRange",
  "Unimplemented",
];

/** Whether a failed CreateVolume leaves no volume behind. */
export function leavesNoVolume(error: unknown): boolean {
  return error instanceof CsiError && NO_VOLUME_CODES.includes(error.codeName);
}

/** What settling needs. */
interface SettlerDeps {
  api: Pick<ProvisionApi, "readPersistentVolume" | "findSecretData">;
  csi: ProvisionCsi;
  journal: Pick<Journal, "clear" | "settling">;
  classes: Lookup<StorageClass>;
  events: EventRecorder;
  /** CreateVolume calls of intents that may still finish in the driver. */
  background: BackgroundCalls;
  /** PVs the saver still holds: their volumes are not this settler's to touch. */
  saverHolds: (pvName: string) => boolean;
  logger: Logger;
}

/** What the settler needs to know of this node. */
interface SettlerOptions {
  driverName: string;
  /** This node's topology segment: whose PV a PV of the intent's name is. */
  segment: Segments | null;
}

/** "done": the intent is cleared (or in the saver's hands); "retry": try again later. */
type SettleResult = "done" | "retry";

/** Settles intents, one at a time per claim key (the claim queue's guarantee). */
export class Settler {
  readonly #deps: SettlerDeps;
  readonly #options: SettlerOptions;

  constructor(deps: SettlerDeps, options: SettlerOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  /** `claim`: the intent's claim (same uid) when it still exists, for Events. */
  async settle(intent: Intent, signal: AbortSignal, claim?: Claim): Promise<SettleResult> {
    const { pvName } = intent;
    if (this.#deps.saverHolds(pvName)) return "done";
    this.#deps.journal.settling(pvName);
    const log = this.#deps.logger.child({ pv: pvName, claimUid: intent.claim.uid });
    const pv = await this.#deps.api.readPersistentVolume(pvName, signal);
    if (pv !== undefined && holdsThisNodesVolume(pv, this.#options)) {
      log.info("Settling an intent: its PV exists on this node, its volume is the PV's");
      this.#deps.journal.clear(pvName, "pv_exists");
      return "done";
    }
    const secrets = await this.#secrets(intent, { signal, claim });
    if (secrets === undefined) return "retry";
    let response: CreateVolumeResponse;
    try {
      response = await this.#deps.csi.createVolume({ ...intent.request, secrets }, signal);
    } catch (error) {
      return this.#createFailed(intent, error);
    }
    const volumeId = response.volume?.volume_id ?? "";
    if (volumeId !== "") {
      await this.#deps.csi.deleteVolume({ volume_id: volumeId, secrets }, signal);
    }
    log.notice(
      { volumeId, claim: intentKey(intent) },
      "Deleted the volume of a claim that is gone or no longer this node's",
    );
    this.#deps.journal.clear(pvName, "volume_deleted");
    return "done";
  }

  #createFailed(intent: Intent, error: unknown): SettleResult {
    const { pvName } = intent;
    const log = this.#deps.logger.child({ pv: pvName, claimUid: intent.claim.uid });
    this.#deps.background.noteFailure(pvName, error);
    if (!leavesNoVolume(error)) {
      log.info({ err: error }, "Settling an intent: CreateVolume failed; retrying");
      return "retry";
    }
    if (this.#deps.background.mayStillRun(pvName)) {
      log.info(
        { err: error },
        "Settling an intent: the driver made no volume now, but an earlier CreateVolume " +
          "went to the background and may still make it; retrying",
      );
      return "retry";
    }
    log.info({ err: error }, "Settling an intent: the driver made no volume");
    this.#deps.journal.clear(pvName, "no_volume");
    return "done";
  }

  /**
   * The provisioner secret's data; {} when there is none, or when every
   * candidate is gone (then a Warning says the volume is deleted without
   * it); undefined (logged) when one cannot be read now.
   */
  async #secrets(
    intent: Intent,
    context: { signal: AbortSignal; claim: Claim | undefined },
  ): Promise<Record<string, string> | undefined> {
    const journaled = intent.provisionerSecret;
    if (journaled === null) return {};
    const candidates: SecretReference[] = [journaled];
    const current = this.#currentReference(intent);
    if (
      current !== null &&
      (current.name !== journaled.name || current.namespace !== journaled.namespace)
    ) {
      candidates.push(current);
    }
    const failures: string[] = [];
    let unreadable = false;
    for (const ref of candidates) {
      try {
        const data = await this.#deps.api.findSecretData(ref, context.signal);
        if (data !== undefined) return data;
        failures.push(`${ref.namespace}/${ref.name}: not found`);
      } catch (error) {
        unreadable = true;
        failures.push(`${ref.namespace}/${ref.name}: ${(error as Error).message}`);
      }
    }
    if (!unreadable) {
      this.#warnDeletingWithout(intent, { claim: context.claim, failures });
      return {};
    }
    this.#deps.logger.warn(
      { pv: intent.pvName, storageClass: intent.className },
      `Cannot read the provisioner secret to clean up volume ${intent.pvName} ` +
        `(${failures.join("; ")}); the intent is kept and retried`,
    );
    return undefined;
  }

  /** The log line, and a Warning on the claim if it still exists (an intent has no PV). */
  #warnDeletingWithout(
    intent: Intent,
    context: { claim: Claim | undefined; failures: string[] },
  ): void {
    const message = `cannot read the provisioner secret to delete volume ${intent.pvName} ` +
      `(${context.failures.join("; ")}); deleting the volume without secrets`;
    this.#deps.logger.warn({ pv: intent.pvName, claim: intentKey(intent) }, message);
    if (context.claim === undefined) return;
    this.#deps.events.record({
      subject: claimSubject(context.claim),
      type: "Warning",
      reason: "DeletionSecretUnavailable",
      message,
    });
  }

  /** The class's provisioner secret now, if the class still exists and names one. */
  #currentReference(intent: Intent): SecretReference | null {
    const storageClass = this.#deps.classes.get(intent.className);
    if (storageClass === undefined) return null;
    const resolved = resolveSecretReference("provisioner", {
      parameters: storageClass.parameters,
      className: storageClass.metadata.name,
      volumeName: intent.pvName,
      claim: { name: intent.claim.name, namespace: intent.claim.namespace },
    });
    return resolved.ok ? resolved.value : null;
  }
}
