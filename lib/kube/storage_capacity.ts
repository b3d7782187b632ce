/**
 * CSIStorageCapacity (storage.k8s.io/v1) on the wire: the trim of what the
 * capacity publisher's informer caches, and the three writes it makes. Writes return what the API server answered as values where the
 * answer is expected (NotFound, Conflict); anything else is thrown as
 * KubeApiError for the caller's retry.
 */
import { MANAGED_BY_LABEL } from "../model/keys.ts";
import { parseQuantity } from "../model/quantity.ts";
import type {
  NewStorageCapacity,
  PublishedCapacity,
  StorageCapacity,
  StorageCapacityChange,
} from "../model/storage_capacity.ts";
import { TokenBucket } from "../queue/token_bucket.ts";
import type { KubeCredentials } from "./rest/credentials.ts";
import type { RawObject } from "./informer/informer.ts";
import { createKubeRest, type KubeRest } from "./rest/client.ts";
import { hasStatus } from "./rest/types.ts";

const STORAGE_CAPACITY_API_VERSION = "storage.k8s.io/v1";

/** Collection path of the objects in a namespace. */
export function storageCapacityPath(namespace: string): string {
  return `/apis/storage.k8s.io/v1/namespaces/${namespace}/csistoragecapacities`;
}

/** Keeps what the publisher reads; the informer's label selector already chose the objects. */
export function trimStorageCapacity(raw: RawObject): StorageCapacity {
  const source = raw as unknown as StorageCapacity;
  const meta = source.metadata;
  const metadata: StorageCapacity["metadata"] = {
    name: meta.name,
    namespace: meta.namespace,
    uid: meta.uid,
    resourceVersion: meta.resourceVersion,
  };
  if (meta.creationTimestamp !== undefined) metadata.creationTimestamp = meta.creationTimestamp;
  if (meta.deletionTimestamp !== undefined) metadata.deletionTimestamp = meta.deletionTimestamp;
  if (meta.labels !== undefined) metadata.labels = meta.labels;
  if (meta.ownerReferences !== undefined) metadata.ownerReferences = meta.ownerReferences;
  const trimmed: StorageCapacity = { metadata, storageClassName: source.storageClassName };
  if (source.nodeTopology !== undefined) trimmed.nodeTopology = source.nodeTopology;
  if (source.capacity !== undefined) trimmed.capacity = source.capacity;
  if (source.maximumVolumeSize !== undefined) {
    trimmed.maximumVolumeSize = source.maximumVolumeSize;
  }
  return trimmed;
}

/**
 * Keeps what the Immediate binding race reads of any node's object (the
 * informer's label selector chose the driver's); objects being deleted, and
 * objects without a managed-by label (no agent's), are not kept.
 */
export function trimPublishedCapacity(raw: RawObject): PublishedCapacity | undefined {
  const source = raw as unknown as StorageCapacity;
  const publisher = source.metadata.labels?.[MANAGED_BY_LABEL];
  if (publisher === undefined || source.metadata.deletionTimestamp !== undefined) return undefined;
  const published: PublishedCapacity = {
    publisher,
    name: source.metadata.name,
    uid: source.metadata.uid,
    resourceVersion: source.metadata.resourceVersion,
    storageClassName: source.storageClassName,
    segment: { ...source.nodeTopology?.matchLabels },
    capacityBytes: bytesOf(source.capacity),
  };
  const maximum = bytesOf(source.maximumVolumeSize);
  if (maximum !== undefined) published.maximumVolumeSizeBytes = maximum;
  const owner = source.metadata.ownerReferences?.find((reference) =>
    reference.controller === true && reference.kind === "Node" && reference.apiVersion === "v1"
  );
  if (owner !== undefined) published.ownerNode = { name: owner.name, uid: owner.uid };
  return published;
}

function bytesOf(quantity: string | undefined): bigint | undefined {
  if (quantity === undefined) return undefined;
  const parsed = parseQuantity(quantity);
  return parsed.ok ? parsed.value : undefined;
}

/** Creates the object; resolves to its name and resourceVersion. */
export async function createStorageCapacity(
  rest: KubeRest,
  target: { namespace: string; object: NewStorageCapacity; unmetered?: boolean },
  signal?: AbortSignal,
): Promise<{ name: string; resourceVersion: string }> {
  const created = await rest.request<StorageCapacity>({
    ...metering(target),
    method: "POST",
    path: storageCapacityPath(target.namespace),
    body: {
      apiVersion: STORAGE_CAPACITY_API_VERSION,
      kind: "CSIStorageCapacity",
      ...target.object,
    },
    ...(signal === undefined ? {} : { signal }),
  });
  return { name: created.metadata.name, resourceVersion: created.metadata.resourceVersion };
}

/**
 * Changes capacity, maximumVolumeSize and owners with a JSON merge patch
 * that carries the cached resourceVersion: the API server refuses it with
 * 409 when the object changed since (upstream's Update of the cached copy,
 * without sending back fields this agent does not cache).
 */
export async function updateStorageCapacity(
  rest: KubeRest,
  target: {
    namespace: string;
    name: string;
    resourceVersion: string;
    change: StorageCapacityChange;
    unmetered?: boolean;
  },
  signal?: AbortSignal,
): Promise<"updated" | "conflict" | "gone"> {
  const { change } = target;
  try {
    await rest.request({
      ...metering(target),
      method: "PATCH",
      path: `${storageCapacityPath(target.namespace)}/${target.name}`,
      contentType: "application/merge-patch+json",
      body: {
        metadata: {
          resourceVersion: target.resourceVersion,
          ...(change.ownerReferences === undefined
            ? {}
            : { ownerReferences: change.ownerReferences }),
        },
        capacity: change.capacity,
        maximumVolumeSize: change.maximumVolumeSize,
      },
      unread: true,
      ...(signal === undefined ? {} : { signal }),
    });
    return "updated";
  } catch (error) {
    if (hasStatus(error, 409)) return "conflict";
    if (hasStatus(error, 404)) return "gone";
    throw error;
  }
}

/**
 * Deletes the object with this UID. NotFound, and a UID precondition that no
 * longer holds (409: the name now belongs to another object), both mean the
 * object meant is gone.
 */
export async function deleteStorageCapacity(
  rest: KubeRest,
  target: { namespace: string; name: string; uid: string; unmetered?: boolean },
  signal?: AbortSignal,
): Promise<"deleted" | "gone"> {
  try {
    await rest.request({
      ...metering(target),
      method: "DELETE",
      path: `${storageCapacityPath(target.namespace)}/${target.name}`,
      body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: target.uid } },
      ...(signal === undefined ? {} : { signal }),
    });
    return "deleted";
  } catch (error) {
    if (hasStatus(error, 404) || hasStatus(error, 409)) return "gone";
    throw error;
  }
}

function metering(target: { unmetered?: boolean }): { unmetered?: boolean } {
  return target.unmetered === true ? { unmetered: true } : {};
}

/**
 * The capacity client: the three writes in one namespace, over a REST client
 * of their own (--kube-api-capacity-qps and --kube-api-capacity-burst). Its
 * one budget is taken by the capacity controller itself, one token per write,
 * before it reads the capacity it writes (lib/capacity/controller.ts); the
 * writes are then sent without taking another token.
 */
export class StorageCapacityClient {
  readonly budget: TokenBucket;
  readonly #rest: KubeRest;
  readonly #namespace: string;

  constructor(
    credentials: KubeCredentials,
    options: { namespace: string; qps: number; burst: number; userAgent: string },
  ) {
    this.budget = new TokenBucket({ qps: options.qps, burst: options.burst });
    this.#rest = createKubeRest(credentials, { budget: this.budget, userAgent: options.userAgent });
    this.#namespace = options.namespace;
  }

  create(object: NewStorageCapacity, signal: AbortSignal): Promise<{ name: string }> {
    const target = { namespace: this.#namespace, object, unmetered: true };
    return createStorageCapacity(this.#rest, target, signal);
  }

  update(
    target: { name: string; resourceVersion: string; change: StorageCapacityChange },
    signal: AbortSignal,
  ): Promise<"updated" | "conflict" | "gone"> {
    const bound = { namespace: this.#namespace, ...target, unmetered: true };
    return updateStorageCapacity(this.#rest, bound, signal);
  }

  delete(target: { name: string; uid: string }, signal: AbortSignal): Promise<"deleted" | "gone"> {
    const bound = { namespace: this.#namespace, ...target, unmetered: true };
    return deleteStorageCapacity(this.#rest, bound, signal);
  }

  /** Closes the client (its budget's timer and its connections). */
  close(): void {
    this.#rest.close();
  }
}
