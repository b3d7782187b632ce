/**
 * planCapacityChanges: given what one StorageClass's object should say on
 * this node, the objects of that class the informer holds, and what
 * GetCapacity answered, decide the writes (upstream's syncCapacity and its
 * informer handlers in pkg/capacity/capacity.go, without their races):
 *
 * - no object wanted (class gone, of another driver, or Immediate) → delete
 *   every object of the class;
 * - the oldest object with the node's segment stands for the class: adopted
 *   as it is, whoever wrote it (a previous run, upstream's sidecar);
 * - younger objects with the same segment are duplicates, objects with
 *   another segment are obsolete: both deleted;
 * - no such object → create one;
 * - capacity, maximumVolumeSize and (when the agent sets one) the owner all
 *   equal → no write at all; otherwise one update of what differs.
 */
import type { Segments } from "../../csi/types.ts";
import { formatBinarySI, parseQuantity } from "../../model/quantity.ts";
import type {
  NewStorageCapacity,
  StorageCapacity,
  StorageCapacityChange,
} from "../../model/storage_capacity.ts";
import type { OwnerReference } from "../../model/objects.ts";
import type { ObservedCapacity } from "./desired.ts";
import { isControlledBy, withController } from "../owner.ts";
import { nodeTopology, selectsSegment } from "./segment.ts";

/** upstream's generateName of every object. */
const GENERATE_NAME = "csisc-";

/** What the class's object on this node should say. */
interface WantedCapacity {
  segment: Segments;
  observed: ObservedCapacity;
  labels: Record<string, string>;
  /** The controller to set; undefined leaves owners alone (--capacity-ownerref-level=-1). */
  owner?: OwnerReference | undefined;
}

/** The inputs for one StorageClass. */
export interface CapacityPlanInput {
  storageClassName: string;
  /** Undefined when the class should have no object. */
  wanted?: WantedCapacity | undefined;
  /** The cached objects (of any class: others are ignored). */
  objects: readonly StorageCapacity[];
}

/** The one create or update of the class's object. */
export type CapacityWrite =
  | { kind: "create"; object: NewStorageCapacity }
  | {
    kind: "update";
    name: string;
    resourceVersion: string;
    change: StorageCapacityChange;
    /** What differed: "capacity", "maximumVolumeSize", "owner". */
    reasons: string[];
  };

/** An object to delete. */
export interface CapacityRemoval {
  name: string;
  uid: string;
  reason: "obsolete" | "duplicate";
}

/** The decision for one class. */
export interface CapacityPlan {
  /** The existing object that stands for the class on this node, if any. */
  current?: StorageCapacity;
  write?: CapacityWrite;
  removals: CapacityRemoval[];
}

/** Decides the writes for one class. Pure. */
export function planCapacityChanges(input: CapacityPlanInput): CapacityPlan {
  const live = input.objects.filter((object) =>
    object.storageClassName === input.storageClassName &&
    object.metadata.deletionTimestamp === undefined
  );
  const { wanted } = input;
  if (wanted === undefined) return { removals: live.map((object) => removal(object, "obsolete")) };
  const matching = live.filter((object) => selectsSegment(object.nodeTopology, wanted.segment))
    .sort(oldestFirst);
  const [current, ...duplicates] = matching;
  const removals = [
    ...live.filter((object) => !matching.includes(object)).map((o) => removal(o, "obsolete")),
    ...duplicates.map((object) => removal(object, "duplicate")),
  ];
  if (current === undefined) {
    return {
      removals,
      write: { kind: "create", object: newObject(input.storageClassName, wanted) },
    };
  }
  const update = updateFor(current, wanted);
  return update === undefined ? { current, removals } : { current, removals, write: update };
}

function removal(object: StorageCapacity, reason: CapacityRemoval["reason"]): CapacityRemoval {
  return { name: object.metadata.name, uid: object.metadata.uid, reason };
}

/** Oldest first; the name breaks ties (creationTimestamp has one-second resolution). */
function oldestFirst(a: StorageCapacity, b: StorageCapacity): number {
  const byTime = (a.metadata.creationTimestamp ?? "").localeCompare(
    b.metadata.creationTimestamp ?? "",
  );
  return byTime !== 0 ? byTime : a.metadata.name.localeCompare(b.metadata.name);
}

function newObject(storageClassName: string, wanted: WantedCapacity): NewStorageCapacity {
  const { observed } = wanted;
  const object: NewStorageCapacity = {
    metadata: { generateName: GENERATE_NAME, labels: { ...wanted.labels } },
    storageClassName,
    nodeTopology: nodeTopology(wanted.segment),
    capacity: formatBinarySI(observed.availableBytes),
  };
  if (wanted.owner !== undefined) object.metadata.ownerReferences = [wanted.owner];
  if (observed.maximumVolumeSizeBytes !== undefined) {
    object.maximumVolumeSize = formatBinarySI(observed.maximumVolumeSizeBytes);
  }
  return object;
}

function updateFor(current: StorageCapacity, wanted: WantedCapacity): CapacityWrite | undefined {
  const { observed, owner } = wanted;
  const reasons: string[] = [];
  if (bytesOf(current.capacity) !== observed.availableBytes) reasons.push("capacity");
  if (bytesOf(current.maximumVolumeSize) !== observed.maximumVolumeSizeBytes) {
    reasons.push("maximumVolumeSize");
  }
  const ownerWrong = owner !== undefined &&
    !isControlledBy(current.metadata.ownerReferences, owner);
  if (ownerWrong) reasons.push("owner");
  if (reasons.length === 0) return undefined;
  const change: StorageCapacityChange = {
    capacity: formatBinarySI(observed.availableBytes),
    maximumVolumeSize: observed.maximumVolumeSizeBytes === undefined
      ? null
      : formatBinarySI(observed.maximumVolumeSizeBytes),
  };
  if (ownerWrong) change.ownerReferences = withController(current.metadata.ownerReferences, owner);
  return {
    kind: "update",
    name: current.metadata.name,
    resourceVersion: current.metadata.resourceVersion,
    change,
    reasons,
  };
}

/** A quantity's value; undefined when absent, null when unreadable (which differs from anything). */
function bytesOf(quantity: string | undefined): bigint | undefined | null {
  if (quantity === undefined) return undefined;
  const parsed = parseQuantity(quantity);
  return parsed.ok ? parsed.value : null;
}
