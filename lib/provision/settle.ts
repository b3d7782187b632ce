/**
 * Settling an intent whose claim no longer needs it (gone, replaced under
 * the same name, bound elsewhere, moved to another node): make sure no volume
 * is left behind. CreateVolume is asked again with the journaled request
 * (idempotent by name: it returns the volume if the driver made it, or makes
 * it now), then, unless a PV of that name holds that very volume, the volume
 * is deleted; then the intent is cleared.
 *
 * Secrets: the journal holds only the provisioner Secret's reference, as
 * resolved when the request was made. It is read again here. If it cannot
 * be read and the StorageClass still exists and names another Secret now
 * (a rotated secret), that one is tried. If neither can be read, the intent
 * is kept and retried with backoff: a volume is never abandoned because its
 * credentials are missing; the journal's age metric and alert show it.
 */
import { CsiError, type GrpcCodeName } from "../csi/status.ts";
import type { CreateVolumeResponse } from "../csi/types.ts";
import type { Logger } from "../log/logger.ts";
import type { SecretReference } from "../model/objects.ts";
import { resolveSecretReference } from "../secrets/references.ts";
import type { Intent } from "./intent.ts";
import type { Journal, Lookup, ProvisionApi, ProvisionCsi } from "./ports.ts";
import type { StorageClass } from "../model/objects.ts";

/**
 * CreateVolume failures after which no volume exists: the CSI spec's
 * CreateVolume errors that mean the request cannot be served (InvalidArgument,
 * NotFound: a missing source, ResourceExhausted, OutOfRange: an unsupported
 * capacity) and a driver without CreateVolume. After any other failure
 * (Internal, Unknown, a timeout, AlreadyExists...) the driver may have made
 * the volume, so its intent stays.
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
export interface SettlerDeps {
  api: Pick<ProvisionApi, "readPersistentVolume" | "readSecretData">;
  csi: ProvisionCsi;
  journal: Pick<Journal, "clear">;
  classes: Lookup<StorageClass>;
  /** PVs the saver still holds: their volumes are not this settler's to touch. */
  saverHolds: (pvName: string) => boolean;
  logger: Logger;
}

/** "done": the intent is cleared (or in the saver's hands); "retry": try again later. */
export type SettleResult = "done" | "retry";

/** Settles intents, one at a time per claim key (the claim queue's guarantee). */
export class Settler {
  readonly #deps: SettlerDeps;
  readonly #driverName: string;

  constructor(deps: SettlerDeps, options: { driverName: string }) {
    this.#deps = deps;
    this.#driverName = options.driverName;
  }

  async settle(intent: Intent, signal: AbortSignal): Promise<SettleResult> {
    const { pvName } = intent;
    if (this.#deps.saverHolds(pvName)) return "done";
    const log = this.#deps.logger.child({ pv: pvName, claimUid: intent.claim.uid });
    const secrets = await this.#secrets(intent, signal);
    if (secrets === undefined) return "retry";
    let response: CreateVolumeResponse;
    try {
      response = await this.#deps.csi.createVolume({ ...intent.request, secrets }, signal);
    } catch (error) {
      if (!leavesNoVolume(error)) {
        log.info({ err: error }, "Settling an intent: CreateVolume failed; retrying");
        return "retry";
      }
      log.info({ err: error }, "Settling an intent: the driver made no volume");
      this.#deps.journal.clear(pvName, "no_volume");
      return "done";
    }
    const volumeId = response.volume?.volume_id ?? "";
    const pv = await this.#deps.api.readPersistentVolume(pvName, signal);
    if (pv?.spec.csi?.driver === this.#driverName && pv.spec.csi.volumeHandle === volumeId) {
      log.info({ volumeId }, "Settling an intent: its PV exists, nothing to delete");
      this.#deps.journal.clear(pvName, "pv_exists");
      return "done";
    }
    if (volumeId !== "") {
      await this.#deps.csi.deleteVolume({ volume_id: volumeId, secrets }, signal);
    }
    log.notice(
      { volumeId, claim: `${intent.claim.namespace}/${intent.claim.name}` },
      "Deleted the volume of a claim that is gone or no longer this node's",
    );
    this.#deps.journal.clear(pvName, "volume_deleted");
    return "done";
  }

  /** The provisioner secret's data; undefined (logged) when it cannot be read now. */
  async #secrets(
    intent: Intent,
    signal: AbortSignal,
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
    for (const ref of candidates) {
      try {
        return await this.#deps.api.readSecretData(ref, signal);
      } catch (error) {
        failures.push(`${ref.namespace}/${ref.name}: ${(error as Error).message}`);
      }
    }
    this.#deps.logger.warn(
      { pv: intent.pvName, storageClass: intent.className },
      `Cannot read the provisioner secret to clean up volume ${intent.pvName} ` +
        `(${failures.join("; ")}); the intent is kept and retried`,
    );
    return undefined;
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
