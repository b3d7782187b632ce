/**
 * Space this node has promised but its driver does not count yet: claims
 * selected to this node whose CreateVolume has not answered (won in the
 * race, or placed here by the scheduler), and claims whose turn passed the
 * GetCapacity call and whose patch is on its way. The race subtracts them
 * from what GetCapacity (or the published capacity) says, so that a node
 * that wins many claims at once does not win more than its pool holds;
 * upstream checks each claim alone, and a burst then ends in
 * ResourceExhausted and a second race for the claims it could not take.
 *
 * Rebuilt from the claim informer's changes (a restart lists every claim
 * selected to this node again); an entry leaves when the claim is bound,
 * gone or another node's, or when its CreateVolume answered.
 */
import { ANN_SELECTED_NODE } from "../../model/keys.ts";
import type { Claim } from "../../model/objects.ts";
import { claimStorageClassName } from "../../model/claim_class.ts";
import { requiredBytes } from "../request/size.ts";

interface Commitment {
  uid: string;
  className: string;
  bytes: bigint;
}

/** The commitments of this node, by claim key. */
export class Commitments {
  readonly #nodeName: string;
  readonly #byKey = new Map<string, Commitment>();
  /** Claims whose CreateVolume answered, by key: their later changes before binding do not count. */
  readonly #answered = new Map<string, string>();

  constructor(nodeName: string) {
    this.#nodeName = nodeName;
  }

  get size(): number {
    return this.#byKey.size;
  }

  /** Bytes promised in a class, leaving out the claim `exceptKey`. */
  bytes(className: string, exceptKey?: string): bigint {
    let sum = 0n;
    for (const [key, commitment] of this.#byKey) {
      if (key !== exceptKey && commitment.className === className) sum += commitment.bytes;
    }
    return sum;
  }

  /** A claim changed in the cache: committed while selected here, unbound and not being deleted. */
  observe(change: { key: string; new?: Claim | undefined }): void {
    const claim = change.new;
    const selected = claim?.metadata.annotations?.[ANN_SELECTED_NODE];
    if (
      claim === undefined || selected !== this.#nodeName || claim.spec.volumeName ||
      claim.metadata.deletionTimestamp
    ) {
      this.#byKey.delete(change.key);
      this.#answered.delete(change.key);
      return;
    }
    const uid = claim.metadata.uid;
    if (this.#byKey.get(change.key)?.uid === uid || this.#answered.get(change.key) === uid) return;
    this.commit(change.key, claim);
  }

  /** A turn passed the GetCapacity call: its claim counts from now on. */
  commit(key: string, claim: Claim): void {
    const size = requiredBytes(claim);
    this.#byKey.set(key, {
      uid: claim.metadata.uid,
      className: claimStorageClassName(claim),
      bytes: size.ok ? size.value : 0n,
    });
  }

  /** The claim is not (or no longer) this node's to create. */
  release(key: string, uid: string): void {
    if (this.#byKey.get(key)?.uid === uid) this.#byKey.delete(key);
  }

  /**
   * CreateVolume answered for the claim: from now on the driver counts it (or
   * refused it). By key: a burst answers each of its many claims one by one.
   */
  answered(key: string, uid: string): void {
    if (this.#byKey.get(key)?.uid !== uid) return;
    this.#byKey.delete(key);
    this.#answered.set(key, uid);
  }
}
