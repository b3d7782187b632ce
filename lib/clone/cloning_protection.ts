/**
 * The cloning-protection controller (external-provisioner
 * pkg/controller/clone_controller.go): a source claim that is being deleted
 * keeps its `provisioner.storage.kubernetes.io/cloning-protection` finalizer
 * until no clone of it is Pending. Unlike upstream, a clone that binds or
 * goes away wakes its source claim at once (upstream waits for a retry or
 * its 15-minute resync), and of all the agents only the one whose node holds
 * the source volume removes the finalizer, the others only if it has not
 * after a while (a node gone for good).
 */
import type { Logger } from "../log/logger.ts";
import { CLONE_PROTECTION_FINALIZER } from "../model/keys.ts";
import type { Claim } from "../model/objects.ts";
import type { HandleOutcome } from "../queue/work/workers.ts";
import { decideCloneFinalizer, pendingSource, sourceKey } from "./decide.ts";
import type { ClaimCache, ClaimChange, CloneApi, VolumeCache } from "./ports.ts";

/** What the controller is given. */
interface CloningProtectionDeps {
  claims: ClaimCache;
  volumes: VolumeCache;
  api: CloneApi;
  logger: Logger;
  now?: () => number;
}

function isDeletedSource(claim: Claim | undefined): boolean {
  return claim !== undefined && claim.metadata.deletionTimestamp !== undefined &&
    (claim.metadata.finalizers?.includes(CLONE_PROTECTION_FINALIZER) ?? false);
}

/** Removes the cloning-protection finalizer of deleted source claims. */
export class CloningProtectionController {
  readonly #deps: CloningProtectionDeps;
  readonly #now: () => number;
  /** When a key was first seen waiting for another agent. */
  readonly #standingBy = new Map<string, number>();

  constructor(deps: CloningProtectionDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  /** The source claims a claim change concerns: itself if deleted, and the source of a clone. */
  static keysFor(change: ClaimChange): string[] {
    const keys = new Set<string>();
    if (isDeletedSource(change.new)) keys.add(change.key);
    for (const claim of [change.old, change.new]) {
      const source = claim === undefined ? undefined : pendingSource(claim);
      if (source?.kind === "clone") keys.add(sourceKey(source));
    }
    return [...keys];
  }

  /** The worker pool's handler for one source claim key ("namespace/name"). */
  async sync(key: string, signal: AbortSignal): Promise<HandleOutcome> {
    const claim = this.#deps.claims.get(key);
    const volumeName = claim?.spec.volumeName ?? "";
    const since = this.#standingBy.get(key);
    const decision = decideCloneFinalizer(claim, {
      claims: this.#deps.claims.list(),
      holdsSource: volumeName !== "" && this.#deps.volumes.get(volumeName) !== undefined,
      waitedMs: since === undefined ? 0 : this.#now() - since,
    });
    switch (decision.kind) {
      case "none":
        this.#standingBy.delete(key);
        return { kind: "done" };
      case "wait":
        this.#deps.logger.debug({ claim: key }, decision.reason);
        return { kind: "retry" };
      case "standIn":
        if (since === undefined) this.#standingBy.set(key, this.#now());
        return { kind: "retryAfter", ms: decision.ms };
      case "remove":
        return await this.#remove(key, claim!, signal);
    }
  }

  async #remove(key: string, claim: Claim, signal: AbortSignal): Promise<HandleOutcome> {
    const { namespace, name } = claim.metadata;
    const result = await this.#deps.api.changeClaimFinalizer(
      { namespace, name },
      { finalizer: CLONE_PROTECTION_FINALIZER, action: "remove" },
      signal,
    );
    this.#standingBy.delete(key);
    this.#deps.logger.info(
      { claim: key, result },
      "Removed the cloning-protection finalizer: no clone of the claim is Pending",
    );
    return { kind: "done" };
  }
}
