/**
 * Two agents for one node (the same NODE_NAME on two machines, or an old and
 * a new pod side by side in a DaemonSet's surge) select the same objects by
 * their managed-by label and would each write back what the other wrote,
 * forever, as fast as their informers deliver: the owner flips between their
 * pods, the capacity between their drivers' answers.
 *
 * This remembers what this agent last wrote to each object. An object whose
 * capacity or controller differs from that, although no write of ours is in
 * flight, was overwritten by someone else: the class is held (no write) for
 * one poll interval and the caller reports it (a Warning Event on the object,
 * a log line, a counter). After the hold this agent writes its value once
 * more; a second agent that does the same is reported again. The fight is
 * never silent, and it costs one write per poll interval, not a hot loop.
 */
import type { EventRecord } from "../model/events.ts";
import { formatBinarySI, parseQuantity } from "../model/quantity.ts";
import type { StorageCapacity } from "../model/storage_capacity.ts";
import { BoundedMap, type BoundObserver } from "../queue/bounded.ts";
import { controllerOf } from "./owner.ts";

/** What this agent wrote to one object. */
interface OwnWrite {
  capacity: string | undefined;
  /** The controller's UID it set; undefined when it leaves owners alone. */
  ownerUid: string | undefined;
}

/** One object per StorageClass of this node: far below this. */
export const WRITES_LIMIT = 1000;

/** What a sync should do about an object someone else changed. */
type ForeignVerdict =
  | { kind: "none" }
  /** Newly seen: report it, hold the class for `ms`. */
  | { kind: "report"; changes: string[]; ms: number }
  /** Still held from an earlier report. */
  | { kind: "hold"; ms: number };

/** This agent's last writes, and the classes held after a foreign write. */
export class ForeignWrites {
  readonly #writes: BoundedMap<string, OwnWrite>;
  readonly #held = new Map<string, number>();
  readonly #holdMs: number;

  constructor(options: { holdMs: number; observer?: BoundObserver; limit?: number }) {
    this.#holdMs = options.holdMs;
    this.#writes = new BoundedMap(options.limit ?? WRITES_LIMIT, options.observer);
  }

  /** Remembers a successful create or update of ours. */
  wrote(objectName: string, write: OwnWrite): void {
    this.#writes.set(objectName, write);
  }

  /** The object is gone (deleted by us or anyone). */
  forget(objectName: string): void {
    this.#writes.delete(objectName);
  }

  /** Whether `current` (the class's object, about to be written) was changed by someone else. */
  verdict(className: string, current: StorageCapacity | undefined, now: number): ForeignVerdict {
    const until = this.#held.get(className);
    if (until !== undefined && now < until) return { kind: "hold", ms: until - now };
    this.#held.delete(className);
    const changes = current === undefined ? [] : this.#changes(current);
    if (changes.length === 0 || until !== undefined) return { kind: "none" };
    this.#held.set(className, now + this.#holdMs);
    return { kind: "report", changes, ms: this.#holdMs };
  }

  #changes(current: StorageCapacity): string[] {
    const ours = this.#writes.get(current.metadata.name);
    if (ours === undefined) return [];
    const changes: string[] = [];
    if (normalized(current.capacity) !== normalized(ours.capacity)) {
      changes.push(`capacity ${current.capacity ?? "unset"} (this agent wrote ${ours.capacity})`);
    }
    const controller = controllerOf(current.metadata.ownerReferences ?? []);
    if (ours.ownerUid !== undefined && controller?.uid !== ours.ownerUid) {
      const now = controller === undefined
        ? "no controller"
        : `controller ${controller.kind} ${controller.name} (uid ${controller.uid})`;
      changes.push(`${now} (this agent set uid ${ours.ownerUid})`);
    }
    return changes;
  }
}

function normalized(quantity: string | undefined): string | undefined {
  if (quantity === undefined) return undefined;
  const parsed = parseQuantity(quantity);
  return parsed.ok ? formatBinarySI(parsed.value) : quantity;
}

/** The Warning Event (and log message) of a foreign write. */
export function foreignWriteEvent(
  current: StorageCapacity,
  verdict: { changes: string[]; ms: number },
): EventRecord {
  const { name, namespace, uid } = current.metadata;
  const message = `CSIStorageCapacity ${name} (storage class ${current.storageClassName}) ` +
    `was overwritten by someone else since this agent wrote it: ${verdict.changes.join("; ")}. ` +
    "Is a second agent running for this node (the same NODE_NAME, hence the same managed-by " +
    `label)? This agent writes it back at most once per ${verdict.ms / 1000} s.`;
  return {
    subject: { kind: "CSIStorageCapacity", apiVersion: "storage.k8s.io/v1", namespace, name, uid },
    type: "Warning",
    reason: "DuplicateAgent",
    message,
  };
}
