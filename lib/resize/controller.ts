/**
 * The resize controller: one sync of a claim key does what external-resizer
 * v2.2.1's expandAndRecover does, in its order. The target is recorded in the
 * claim (allocatedResources, ControllerResizeInProgress) before
 * ControllerExpandVolume is sent, so that an agent killed during the call
 * finishes to that recorded size after its restart; then the PV's capacity,
 * then the claim's conditions, each with its Event.
 */
import type { Logger } from "../log/logger.ts";
import type { Claim, PersistentVolume } from "../model/objects.ts";
import { formatBinarySI, parseQuantity } from "../model/quantity.ts";
import type { HandleOutcome } from "../queue/work/workers.ts";
import {
  claimStatusPatch,
  markControllerResizeError,
  markExpansionFinished,
  markNodeExpansionPending,
  markResizeInProgress,
} from "./claim_status.ts";
import { decideExpansion, entersSlowSet, failureKind } from "./decide.ts";
import {
  exceedsCapacityEvent,
  fileSystemResizeRequiredEvent,
  pluginFailure,
  resizeFailedEvent,
  resizeSucceededEvent,
  resizingEvent,
} from "./events.ts";
import type { ResizeMemory } from "./memory.ts";
import type { ResizePorts } from "./ports.ts";
import { expandRequest } from "./request.ts";

/** What the controller knows of its driver and node. */
export interface ResizeOptions {
  driverName: string;
  nodeName: string;
  singleNodeMultiWriter: boolean;
  now?: () => Date;
}

/** A claim on its way through one expansion. */
interface Attempt {
  key: string;
  claim: Claim;
  pv: PersistentVolume;
  size: string;
  bytes: bigint;
  signal: AbortSignal;
}

export class ResizeController {
  readonly #ports: ResizePorts;
  readonly #memory: ResizeMemory;
  readonly #options: ResizeOptions;
  readonly #logger: Logger;

  constructor(ports: ResizePorts, memory: ResizeMemory, options: ResizeOptions, logger: Logger) {
    this.#ports = ports;
    this.#memory = memory;
    this.#options = options;
    this.#logger = logger;
  }

  /** Syncs one claim key. */
  async sync(key: string, signal: AbortSignal): Promise<HandleOutcome> {
    const claim = this.#ports.claims.get(key);
    const pv = claim?.spec.volumeName ? this.#ports.volumes.get(claim.spec.volumeName) : undefined;
    if (claim === undefined || pv === undefined) {
      this.#memory.forget(key);
      return { kind: "done" };
    }
    const className = pv.spec.storageClassName ?? claim.spec.storageClassName ?? "";
    const decision = decideExpansion({
      claim,
      pv,
      driverName: this.#options.driverName,
      allowVolumeExpansion: this.#ports.classes.get(className)?.allowVolumeExpansion === true,
      finalError: this.#memory.hasFinalError(key),
      slowRemainingMs: this.#memory.slowRemainingMs(key),
    });
    if (decision.kind === "none") {
      this.#logger.debug({ claim: key, why: decision.why }, "No need to resize");
      return { kind: "done" };
    }
    if (entersSlowSet(claim)) this.#memory.addSlow(key);
    if (decision.kind === "wait") {
      this.#logger.debug({ claim: key }, decision.message);
      return { kind: "retryAfter", ms: decision.ms };
    }
    const marked = markResizeInProgress(claim, decision.size, {
      updateStatus: decision.updateStatus,
      now: this.#now(),
    });
    let recorded: Claim;
    try {
      recorded = await this.#ports.api.patchClaimStatus(
        claim,
        claimStatusPatch(claim, marked, { resourceVersionCheck: true }),
        signal,
      );
    } catch (error) {
      this.#logger.info({ claim: key, err: error }, "Marking the claim as resizing failed");
      return { kind: "retry", error };
    }
    const attempt = {
      key,
      claim: recorded,
      pv,
      size: decision.size,
      bytes: decision.bytes,
      signal,
    };
    this.#ports.events.record(resizingEvent(recorded, pv.metadata.name));
    return await this.#expand(attempt);
  }

  /** callResizeOnPlugin, and the Warning when it failed. */
  async #expand(attempt: Attempt): Promise<HandleOutcome> {
    try {
      await this.#callAndRecord(attempt);
      this.#logger.info(
        { claim: attempt.key, pv: attempt.pv.metadata.name, size: attempt.size },
        "Volume expanded",
      );
      return { kind: "done" };
    } catch (error) {
      const message = (error as Error).message;
      this.#ports.events.record(resizeFailedEvent(attempt.claim, message));
      this.#logger.info({ claim: attempt.key, err: error }, "Volume expansion failed");
      return { kind: "retry", error };
    }
  }

  async #callAndRecord(attempt: Attempt): Promise<void> {
    const { key, pv, signal } = attempt;
    let answer;
    try {
      answer = await this.#ports.csi.controllerExpandVolume(await this.#request(attempt), signal);
    } catch (error) {
      await this.#recordFailure(attempt, error);
      throw new Error(
        pluginFailure(pv.metadata.name, this.#options.driverName, String((error as Error).message)),
      );
    }
    this.#memory.setFinalError(key, false);
    this.#memory.removeSlow(key);
    const capacity = formatBinarySI(BigInt(answer.capacity_bytes));
    await this.#patchVolume(pv.metadata.name, capacity, signal);
    const { claim } = attempt;
    const written = answer.node_expansion_required
      ? markNodeExpansionPending(claim, this.#now())
      : markExpansionFinished(claim, capacity);
    const patch = claimStatusPatch(claim, written, { resourceVersionCheck: true });
    const saved = await this.#ports.api.patchClaimStatus(claim, patch, signal).catch((error) => {
      throw new Error(`mark PVC ${key} failed: ${(error as Error).message}`);
    });
    this.#ports.events.record(
      answer.node_expansion_required
        ? fileSystemResizeRequiredEvent(saved)
        : resizeSucceededEvent(saved),
    );
  }

  async #request(attempt: Attempt) {
    const ref = attempt.pv.spec.csi?.controllerExpandSecretRef;
    const secrets = ref === undefined
      ? {}
      : await this.#ports.api.readSecretData(ref, attempt.signal)
        .catch((error) => {
          throw new Error(
            `error getting secret ${ref.name} in namespace ${ref.namespace}: ${
              (error as Error).message
            }`,
          );
        });
    const built = expandRequest(attempt.pv, {
      bytes: attempt.bytes,
      secrets,
      singleNodeMultiWriter: this.#options.singleNodeMultiWriter,
    });
    if (!built.ok) throw new Error(built.error);
    return built.request;
  }

  /** What a failed call leaves in memory and on the claim (final and infeasible errors). */
  async #recordFailure(attempt: Attempt, error: unknown): Promise<void> {
    const { key, signal } = attempt;
    const kind = failureKind((error as { codeName?: string }).codeName);
    this.#memory.setFinalError(key, kind !== "transient");
    if (kind !== "infeasible") this.#memory.removeSlow(key);
    this.#warnIfPoolTooSmall(attempt, error);
    if (kind === "transient") return;
    const message = String((error as Error).message);
    const marked = markControllerResizeError(attempt.claim, message, {
      infeasible: kind === "infeasible",
      now: this.#now(),
    });
    const patch = claimStatusPatch(attempt.claim, marked, { resourceVersionCheck: false });
    await this.#ports.api.patchClaimStatus(attempt.claim, patch, signal).catch((failure) => {
      throw new Error(
        `resizing failed in controller with ${message} but failed to update PVC ${key} with: ${
          (failure as Error).message
        }`,
      );
    });
  }

  /** The Warning naming the node and its published free space, when that could not hold the growth. */
  #warnIfPoolTooSmall(attempt: Attempt, error: unknown): void {
    const code = (error as { codeName?: string }).codeName;
    if (code !== "OutOfRange" && code !== "ResourceExhausted") return;
    const className = attempt.pv.spec.storageClassName ?? "";
    const free = this.#ports.publishedFree?.(className);
    const current = parseQuantity(attempt.pv.spec.capacity?.storage ?? "0");
    if (free === undefined || !current.ok) return;
    const growth = attempt.bytes - current.value;
    if (growth <= free) return;
    this.#ports.events.record(exceedsCapacityEvent(attempt.claim, {
      node: this.#options.nodeName,
      className,
      free,
      growth,
      size: attempt.size,
    }));
  }

  async #patchVolume(name: string, capacity: string, signal: AbortSignal): Promise<void> {
    try {
      await this.#ports.api.patchVolumeCapacity(name, capacity, signal);
    } catch (error) {
      throw new Error(
        `error updating pv ${JSON.stringify(name)} by resizer: updating capacity of PV ${
          JSON.stringify(name)
        } to ${capacity} failed: ${(error as Error).message}`,
      );
    }
  }

  #now(): Date {
    return this.#options.now?.() ?? new Date();
  }
}
