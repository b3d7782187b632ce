/**
 * The Kubernetes calls the agent makes outside its informers, over KubeRest.
 * Expected answers (AlreadyExists, NotFound, Conflict) are returned as
 * values; anything else is thrown as KubeApiError for the caller's retry.
 */
import { ANN_SELECTED_NODE, PV_PROTECTION_FINALIZER } from "../model/keys.ts";
import type { RawObject } from "./informer.ts";
import type {
  Claim,
  PersistentVolume,
  SecretReference,
  VolumeAttributesClass,
} from "../model/objects.ts";
import { hasStatus, type KubeRest } from "./rest.ts";
import { trimClaim } from "./trim.ts";

/** Creates the PV; an existing PV of that name counts as created (names are deterministic). */
export async function createPersistentVolume(
  rest: KubeRest,
  pv: PersistentVolume,
  signal?: AbortSignal,
): Promise<"created" | "exists"> {
  try {
    await rest.request({
      method: "POST",
      path: "/api/v1/persistentvolumes",
      body: { apiVersion: "v1", kind: "PersistentVolume", ...pv },
      ...(signal === undefined ? {} : { signal }),
    });
    return "created";
  } catch (error) {
    if (hasStatus(error, 409)) return "exists";
    throw error;
  }
}

/** Reads a claim from the API server (not the cache); undefined when it does not exist. */
export async function readClaim(
  rest: KubeRest,
  key: { namespace: string; name: string },
  signal?: AbortSignal,
): Promise<Claim | undefined> {
  try {
    const raw = await rest.request<RawObject>({
      method: "GET",
      path: `/api/v1/namespaces/${key.namespace}/persistentvolumeclaims/${key.name}`,
      ...(signal === undefined ? {} : { signal }),
    });
    // Read for its identity and state only: keep every claim, whatever its node.
    return trimClaim(raw, { nodeName: "", keepAll: true });
  } catch (error) {
    if (hasStatus(error, 404)) return undefined;
    throw error;
  }
}

/**
 * Removes `volume.kubernetes.io/selected-node` so that the scheduler picks
 * a node again. The claim's resourceVersion is a precondition (a merge patch
 * that carries it fails with 409 when the claim changed), as upstream's
 * Update of the cached copy.
 */
export async function removeSelectedNode(
  rest: KubeRest,
  claim: Claim,
  signal?: AbortSignal,
): Promise<"removed" | "conflict" | "gone"> {
  try {
    await rest.request({
      method: "PATCH",
      path:
        `/api/v1/namespaces/${claim.metadata.namespace}/persistentvolumeclaims/${claim.metadata.name}`,
      contentType: "application/merge-patch+json",
      body: {
        metadata: {
          resourceVersion: claim.metadata.resourceVersion,
          annotations: { [ANN_SELECTED_NODE]: null },
        },
      },
      ...(signal === undefined ? {} : { signal }),
    });
    return "removed";
  } catch (error) {
    if (hasStatus(error, 409)) return "conflict";
    if (hasStatus(error, 404)) return "gone";
    throw error;
  }
}

/** Reads a Secret's data, decoded to strings. Throws (with the API's reason) when it cannot. */
export async function readSecretData(
  rest: KubeRest,
  ref: SecretReference,
  signal?: AbortSignal,
): Promise<Record<string, string>> {
  const secret = await rest.request<{ data?: Record<string, string> }>({
    method: "GET",
    path: `/api/v1/namespaces/${ref.namespace}/secrets/${ref.name}`,
    ...(signal === undefined ? {} : { signal }),
  });
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    data[key] = Buffer.from(value, "base64").toString("utf8");
  }
  return data;
}

/** Reads a VolumeAttributesClass (storage.k8s.io/v1); undefined when it does not exist. */
export async function readVolumeAttributesClass(
  rest: KubeRest,
  name: string,
  signal?: AbortSignal,
): Promise<VolumeAttributesClass | undefined> {
  try {
    return await rest.request<VolumeAttributesClass>({
      method: "GET",
      path: `/apis/storage.k8s.io/v1/volumeattributesclasses/${name}`,
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    if (hasStatus(error, 404)) return undefined;
    throw error;
  }
}

/** Whether the API server serves a resource in a group version (discovery). */
export async function servesResource(
  rest: KubeRest,
  groupVersion: string,
  resource: string,
): Promise<boolean> {
  try {
    const list = await rest.request<{ resources?: { name: string }[] }>({
      method: "GET",
      path: groupVersion === "v1" ? "/api/v1" : `/apis/${groupVersion}`,
    });
    return (list.resources ?? []).some((candidate) => candidate.name === resource);
  } catch (error) {
    if (hasStatus(error, 404)) return false;
    throw error;
  }
}

/**
 * Adds or removes the PV protection finalizer with a strategic merge patch:
 * metadata.finalizers merges by value, so concurrent patches by many agents
 * (or by Kubernetes' own pv-protection) never overwrite each other.
 */
export async function patchPersistentVolumeFinalizer(
  rest: KubeRest,
  pvName: string,
  change: { finalizer: string; action: "add" | "remove" },
  signal?: AbortSignal,
): Promise<"patched" | "gone"> {
  const metadata = change.action === "add"
    ? { finalizers: [change.finalizer] }
    : { "$deleteFromPrimitiveList/finalizers": [change.finalizer] };
  try {
    await rest.request({
      method: "PATCH",
      path: `/api/v1/persistentvolumes/${pvName}`,
      contentType: "application/strategic-merge-patch+json",
      body: { metadata },
      ...(signal === undefined ? {} : { signal }),
    });
    return "patched";
  } catch (error) {
    if (hasStatus(error, 404)) return "gone";
    throw error;
  }
}

/** Deletes a PV object; one that is already gone counts as deleted. */
export async function deletePersistentVolume(
  rest: KubeRest,
  pvName: string,
  signal?: AbortSignal,
): Promise<"deleted" | "gone"> {
  try {
    await rest.request({
      method: "DELETE",
      path: `/api/v1/persistentvolumes/${pvName}`,
      ...(signal === undefined ? {} : { signal }),
    });
    return "deleted";
  } catch (error) {
    if (hasStatus(error, 404)) return "gone";
    throw error;
  }
}

/** Every call above, bound to one client: the shape the controllers' ports expect. */
export interface BoundApi {
  createPersistentVolume(pv: PersistentVolume, signal?: AbortSignal): Promise<"created" | "exists">;
  readClaim(
    key: { namespace: string; name: string },
    signal?: AbortSignal,
  ): Promise<Claim | undefined>;
  removeSelectedNode(claim: Claim, signal?: AbortSignal): Promise<"removed" | "conflict" | "gone">;
  readSecretData(ref: SecretReference, signal?: AbortSignal): Promise<Record<string, string>>;
  readVolumeAttributesClass(
    name: string,
    signal?: AbortSignal,
  ): Promise<VolumeAttributesClass | undefined>;
  deletePersistentVolume(name: string, signal?: AbortSignal): Promise<"deleted" | "gone">;
  patchFinalizer(
    name: string,
    action: "add" | "remove",
    signal?: AbortSignal,
  ): Promise<"patched" | "gone">;
}

/** Binds every call above to one client. */
export function boundApi(rest: KubeRest): BoundApi {
  return {
    createPersistentVolume: (pv: PersistentVolume, signal?: AbortSignal) =>
      createPersistentVolume(rest, pv, signal),
    readClaim: (key: { namespace: string; name: string }, signal?: AbortSignal) =>
      readClaim(rest, key, signal),
    removeSelectedNode: (claim: Claim, signal?: AbortSignal) =>
      removeSelectedNode(rest, claim, signal),
    readSecretData: (ref: SecretReference, signal?: AbortSignal) =>
      readSecretData(rest, ref, signal),
    readVolumeAttributesClass: (name: string, signal?: AbortSignal) =>
      readVolumeAttributesClass(rest, name, signal),
    deletePersistentVolume: (name: string, signal?: AbortSignal) =>
      deletePersistentVolume(rest, name, signal),
    patchFinalizer: (name: string, action: "add" | "remove", signal?: AbortSignal) =>
      patchPersistentVolumeFinalizer(
        rest,
        name,
        { finalizer: PV_PROTECTION_FINALIZER, action },
        signal,
      ),
  };
}
