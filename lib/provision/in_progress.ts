/**
 * Claims whose CreateVolume may still be running in the driver ("in
 * background": a timeout, Unavailable, Aborted...). The claim is remembered
 * with the request that was sent, so that if the claim is deleted meanwhile
 * the operation can still be finished and the volume deleted, not leaked
 * (upstream's claimsInProgress; upstream then saves a PV for the gone claim).
 */
import type { CreateVolumeRequest } from "../csi/types.ts";
import type { Claim } from "../model/objects.ts";

/** One operation that may still be running. */
export interface InProgress {
  claim: Claim;
  /** The request as sent (with secrets, kept in memory only). */
  request: CreateVolumeRequest;
}

/** In-background operations by claim key. */
export class InProgressClaims {
  readonly #entries = new Map<string, InProgress>();

  get(key: string): InProgress | undefined {
    return this.#entries.get(key);
  }

  set(key: string, entry: InProgress): void {
    this.#entries.set(key, entry);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
