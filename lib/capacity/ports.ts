/**
 * What the capacity controller needs from the world, declared here where it
 * is used and kept narrow. main.ts passes the real implementations (the
 * informers, lib/kube/storage_capacity.ts, the CSI connection); unit tests
 * pass small fakes.
 */
import type { GetCapacityRequest, GetCapacityResponse } from "../csi/types.ts";
import type { OwnerReference, StorageClass } from "../model/objects.ts";
import type {
  NewStorageCapacity,
  StorageCapacity,
  StorageCapacityChange,
} from "../model/storage_capacity.ts";

/** The StorageClass cache (shared with provisioning). */
export interface ClassLookup {
  get(name: string): StorageClass | undefined;
  list(): StorageClass[];
}

/** The cache of this node's own objects (label-selected informer). */
export interface CapacityObjectCache {
  list(): StorageCapacity[];
}

/** The CSI call. */
export interface CapacityCsi {
  getCapacity(request: GetCapacityRequest, signal: AbortSignal): Promise<GetCapacityResponse>;
}

/** The writes, through the capacity client (--kube-api-capacity-qps/-burst). */
export interface CapacityApi {
  create(object: NewStorageCapacity, signal: AbortSignal): Promise<{ name: string }>;
  update(
    target: { name: string; resourceVersion: string; change: StorageCapacityChange },
    signal: AbortSignal,
  ): Promise<"updated" | "conflict" | "gone">;
  delete(target: { name: string; uid: string }, signal: AbortSignal): Promise<"deleted" | "gone">;
}

/** Who owns the objects. */
export interface CapacityOwner {
  /** The controller reference to set; undefined leaves owners alone. */
  current(): OwnerReference | undefined;
  /** Checked before each create: "gone" when the owner no longer exists (nothing is created). */
  confirm(signal: AbortSignal): Promise<"ok" | "gone">;
}

/**
 * The capacity client's write budget (--kube-api-capacity-qps/-burst). The
 * controller waits for it before it reads the capacity it writes, so that a
 * write delayed by the budget carries the value of when it is sent.
 */
export interface WriteBudget {
  /** Waits for one write; false when `signal` aborted first. */
  take(signal: AbortSignal): Promise<boolean>;
}
