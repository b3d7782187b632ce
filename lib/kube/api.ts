/**
 * The Kubernetes calls the agent makes outside its informers, over one
 * KubeRest client. Expected answers (AlreadyExists, NotFound, Conflict) are
 * returned as values; anything else is thrown as KubeApiError for the
 * caller's retry. Each controller declares the subset it uses as its own port
 * (provision/ports.ts, delete/ports.ts, capacity/ports.ts); main.ts hands
 * this one object to all of them.
 */
import { ANN_SELECTED_NODE, PV_PROTECTION_FINALIZER } from "../model/keys.ts";
import type {
  Claim,
  ObjectIdentity,
  ObjectRef,
  PersistentVolume,
  SecretReference,
  VolumeAttributesClass,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from "../model/objects.ts";
import type { RawObject } from "./informer.ts";
import { readNodeUid, readObjectIdentity } from "./owner_objects.ts";
import type { KubeRest } from "./rest.ts";
import { hasStatus } from "./rest_types.ts";
import {
  changeSnapshotFinalizer,
  type FinalizerWrite,
  mayListSnapshots,
  readVolumeSnapshot,
  readVolumeSnapshotContent,
} from "./snapshots.ts";
import { trimClaim, trimPersistentVolume } from "./trim.ts";

/** The calls, bound to one client. */
export class KubeApi {
  readonly #rest: KubeRest;

  constructor(rest: KubeRest) {
    this.#rest = rest;
  }

  /** Creates the PV; an existing PV of that name counts as created (names are deterministic). */
  async createPersistentVolume(
    pv: PersistentVolume,
    signal?: AbortSignal,
  ): Promise<"created" | "exists"> {
    try {
      await this.#rest.request({
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
  async readClaim(
    key: { namespace: string; name: string },
    signal?: AbortSignal,
  ): Promise<Claim | undefined> {
    try {
      const raw = await this.#rest.request<RawObject>({
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
  async removeSelectedNode(
    claim: Claim,
    signal?: AbortSignal,
  ): Promise<"removed" | "conflict" | "gone"> {
    try {
      await this.#rest.request({
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
  async readSecretData(
    ref: SecretReference,
    signal?: AbortSignal,
  ): Promise<Record<string, string>> {
    const secret = await this.#rest.request<{ data?: Record<string, string> }>({
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
  async readVolumeAttributesClass(
    name: string,
    signal?: AbortSignal,
  ): Promise<VolumeAttributesClass | undefined> {
    try {
      return await this.#rest.request<VolumeAttributesClass>({
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
  async servesResource(
    groupVersion: string,
    resource: string,
  ): Promise<boolean> {
    try {
      const list = await this.#rest.request<{ resources?: { name: string }[] }>({
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
  async patchFinalizer(
    pvName: string,
    action: "add" | "remove",
    signal?: AbortSignal,
  ): Promise<"patched" | "gone"> {
    return await this.#patchFinalizers(
      `/api/v1/persistentvolumes/${pvName}`,
      { finalizer: PV_PROTECTION_FINALIZER, action },
      signal,
    );
  }

  /** A strategic merge patch of one finalizer; a missing object is "gone". */
  async #patchFinalizers(
    path: string,
    change: { finalizer: string; action: "add" | "remove" },
    signal?: AbortSignal,
  ): Promise<"patched" | "gone"> {
    const metadata = change.action === "add"
      ? { finalizers: [change.finalizer] }
      : { "$deleteFromPrimitiveList/finalizers": [change.finalizer] };
    try {
      await this.#rest.request({
        method: "PATCH",
        path,
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
  async deletePersistentVolume(
    pvName: string,
    signal?: AbortSignal,
  ): Promise<"deleted" | "gone"> {
    try {
      await this.#rest.request({
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

  /** Reads a PV from the API server (not the cache); undefined when it does not exist. */
  async readPersistentVolume(
    name: string,
    signal?: AbortSignal,
  ): Promise<PersistentVolume | undefined> {
    try {
      const raw = await this.#rest.request<RawObject>({
        method: "GET",
        path: `/api/v1/persistentvolumes/${name}`,
        ...(signal === undefined ? {} : { signal }),
      });
      return trimPersistentVolume(raw, { keep: () => true });
    } catch (error) {
      if (hasStatus(error, 404)) return undefined;
      throw error;
    }
  }

  /**
   * Adds or removes a finalizer of a claim with a strategic merge patch,
   * which merges metadata.finalizers by value: no read, no conflict, and
   * agents that do the same at once do not overwrite each other.
   */
  async changeClaimFinalizer(
    ref: { namespace: string; name: string },
    change: { finalizer: string; action: "add" | "remove" },
    signal?: AbortSignal,
  ): Promise<"patched" | "gone"> {
    return await this.#patchFinalizers(
      `/api/v1/namespaces/${ref.namespace}/persistentvolumeclaims/${ref.name}`,
      change,
      signal,
    );
  }

  /** Reads a VolumeSnapshot; undefined when it does not exist. */
  readVolumeSnapshot(
    ref: { namespace: string; name: string },
    signal?: AbortSignal,
  ): Promise<VolumeSnapshot | undefined> {
    return readVolumeSnapshot(this.#rest, ref, signal);
  }

  /** Reads a VolumeSnapshotContent; undefined when it does not exist. */
  readVolumeSnapshotContent(
    name: string,
    signal?: AbortSignal,
  ): Promise<VolumeSnapshotContent | undefined> {
    return readVolumeSnapshotContent(this.#rest, name, signal);
  }

  /** Adds or removes a finalizer of a VolumeSnapshot (see changeSnapshotFinalizer). */
  changeSnapshotFinalizer(
    ref: { namespace: string; name: string },
    change: {
      finalizer: string;
      action: "add" | "remove";
      current?: VolumeSnapshot;
      tries?: number;
    },
    signal?: AbortSignal,
  ): Promise<FinalizerWrite> {
    const { current, tries, finalizer, action } = change;
    return changeSnapshotFinalizer(this.#rest, { ref, finalizer, action }, {
      ...(current === undefined ? {} : { current }),
      ...(tries === undefined ? {} : { tries }),
      ...(signal === undefined ? {} : { signal }),
    });
  }

  /** Whether the agent may list VolumeSnapshots (false on 403). */
  mayListSnapshots(signal?: AbortSignal): Promise<boolean> {
    return mayListSnapshots(this.#rest, signal);
  }

  /** Reads a namespaced object's identity (its UID and owners); throws when it cannot. */
  readObject(ref: ObjectRef, signal?: AbortSignal): Promise<ObjectIdentity> {
    return readObjectIdentity(this.#rest, ref, signal);
  }

  /** The Node's UID; undefined when the Node does not exist. */
  readNodeUid(name: string, signal?: AbortSignal): Promise<string | undefined> {
    return readNodeUid(this.#rest, name, signal);
  }
}
