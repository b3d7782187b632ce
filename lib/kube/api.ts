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
import type { Logger } from "../log/logger.ts";
import { Discovery } from "./discovery.ts";
import type { RawObject } from "./informer/informer.ts";
import { readNodeUid, readObjectIdentity } from "./owner_objects.ts";
import {
  changeFinalizer,
  type PatchOrUpdate,
  patchOrUpdate,
  PatchPermissions,
  setAnnotations,
} from "./patch_or_update.ts";
import type { KubeRest } from "./rest/client.ts";
import { hasStatus, KubeApiError } from "./rest/types.ts";
import {
  changeSnapshotFinalizer,
  type FinalizerWrite,
  mayListSnapshots,
  readVolumeSnapshot,
  readVolumeSnapshotContent,
  SnapshotDiscovery,
} from "./snapshots.ts";
import { trimClaim, trimPersistentVolume } from "./trim.ts";

/**
 * 4xx answers that refuse the request as it is; 401 (a token being rotated),
 * 403 (RBAC being fixed), 408 and 429 may pass on a later try.
 */
function isRefusal(status: number): boolean {
  return status >= 400 && status < 500 && ![401, 403, 408, 409, 429].includes(status);
}

/** Updates of one finalizer write that meet conflicts (a patch of it never does). */
const UPDATE_CONFLICT_TRIES = 3;

function claimPath(key: { namespace: string; name: string }): string {
  return `/api/v1/namespaces/${key.namespace}/persistentvolumeclaims/${key.name}`;
}

/** The calls, bound to one client. */
export class KubeApi {
  readonly #rest: KubeRest;
  readonly #discovery: Discovery;
  readonly #snapshots: SnapshotDiscovery;
  readonly #patches: PatchPermissions;

  /**
   * `logger`: where the VolumeSnapshot API's absence and arrival are told,
   * and a patch that RBAC forbids.
   */
  constructor(rest: KubeRest, options: { logger?: Logger } = {}) {
    this.#rest = rest;
    this.#patches = new PatchPermissions(options.logger);
    this.#discovery = new Discovery(rest);
    this.#snapshots = new SnapshotDiscovery(
      (groupVersion, resource) => this.servesResource(groupVersion, resource),
      options,
    );
  }

  /**
   * Creates the PV. A 409 reads the existing PV so that the caller can check
   * that it holds the same volume (a PV of that name may have been made by
   * another node's agent). Any other 4xx but 401, 403, 408 and 429 is a
   * refusal of this very object, returned as a value; the rest is thrown
   * for a retry.
   */
  async createPersistentVolume(
    pv: PersistentVolume,
    signal?: AbortSignal,
  ): Promise<
    | { kind: "created" }
    | { kind: "exists"; existing: PersistentVolume | undefined }
    | { kind: "rejected"; status: number; reason: string; message: string; fields: string[] }
  > {
    try {
      await this.#rest.request({
        method: "POST",
        path: "/api/v1/persistentvolumes",
        body: { apiVersion: "v1", kind: "PersistentVolume", ...pv },
        unread: true,
        ...(signal === undefined ? {} : { signal }),
      });
      return { kind: "created" };
    } catch (error) {
      if (hasStatus(error, 409)) {
        return {
          kind: "exists",
          existing: await this.readPersistentVolume(pv.metadata.name, signal),
        };
      }
      if (error instanceof KubeApiError && isRefusal(error.status)) {
        const { status, reason, message, fields } = error;
        return { kind: "rejected", status, reason, message, fields };
      }
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

  /** Reads a claim from the API server (not the cache); undefined when it does not exist. */
  async readClaim(
    key: { namespace: string; name: string },
    signal?: AbortSignal,
  ): Promise<Claim | undefined> {
    try {
      const raw = await this.#rest.request<RawObject>({
        method: "GET",
        path: claimPath(key),
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
   * Sets `volume.kubernetes.io/selected-node` to `nodeName`: the move of the
   * Immediate binding ownership race. Upstream (external-provisioner
   * `becomeOwner`) sends a full Update of its cached copy, whose
   * resourceVersion makes it fail with 409 when another node got there
   * first. This merge patch carries the same resourceVersion, which the API
   * server checks the same way (409 Conflict when the claim changed), and
   * sends only the annotation: the cached claim here is trimmed, so a full
   * Update would drop every field the cache does not keep. RBAC: patch on
   * persistentvolumeclaims, or, as upstream, update (patchOrUpdate).
   */
  async selectNode(
    claim: Claim,
    nodeName: string,
    signal?: AbortSignal,
  ): Promise<"selected" | "conflict" | "gone"> {
    try {
      await this.#patchClaim(claim, { [ANN_SELECTED_NODE]: nodeName }, signal);
      return "selected";
    } catch (error) {
      if (hasStatus(error, 409)) return "conflict";
      if (hasStatus(error, 404)) return "gone";
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
      await this.#patchClaim(claim, { [ANN_SELECTED_NODE]: null }, signal);
      return "removed";
    } catch (error) {
      if (hasStatus(error, 409)) return "conflict";
      if (hasStatus(error, 404)) return "gone";
      throw error;
    }
  }

  /**
   * A merge patch of the claim's annotations, with its resourceVersion as a
   * precondition; where patch is forbidden, an update of the claim read,
   * under the same precondition.
   */
  async #patchClaim(
    claim: Claim,
    annotations: Record<string, string | null>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { resourceVersion } = claim.metadata;
    await this.#write({
      resource: "persistentvolumeclaims",
      path: claimPath(claim.metadata),
      patch: {
        contentType: "application/merge-patch+json",
        body: { metadata: { resourceVersion, annotations } },
      },
      apply: (object) => {
        setAnnotations(object, annotations);
        return true;
      },
      resourceVersion,
      signal,
    });
  }

  /** A patch, or the read and update that RBAC allows (patch_or_update.ts). */
  async #write(write: PatchOrUpdate): Promise<void> {
    await patchOrUpdate(this.#rest, this.#patches, write);
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

  /** As readSecretData; undefined when the Secret or its namespace does not exist (404). */
  async findSecretData(
    ref: SecretReference,
    signal?: AbortSignal,
  ): Promise<Record<string, string> | undefined> {
    try {
      return await this.readSecretData(ref, signal);
    } catch (error) {
      if (hasStatus(error, 404)) return undefined;
      throw error;
    }
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

  /**
   * Whether the API server serves a resource in a group version (discovery);
   * answers are shared for a few seconds (Discovery).
   */
  servesResource(groupVersion: string, resource: string): Promise<boolean> {
    return this.#discovery.serves(groupVersion, resource);
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
      { resource: "persistentvolumes", path: `/api/v1/persistentvolumes/${pvName}` },
      { finalizer: PV_PROTECTION_FINALIZER, action },
      signal,
    );
  }

  /**
   * A strategic merge patch of one finalizer; where patch is forbidden, an
   * update of the object read, read again after a conflict. A missing object
   * is "gone".
   */
  async #patchFinalizers(
    target: { resource: string; path: string },
    change: { finalizer: string; action: "add" | "remove" },
    signal?: AbortSignal,
  ): Promise<"patched" | "gone"> {
    const metadata = change.action === "add"
      ? { finalizers: [change.finalizer] }
      : { "$deleteFromPrimitiveList/finalizers": [change.finalizer] };
    for (let attempt = 1;; attempt++) {
      try {
        await this.#write({
          ...target,
          patch: { contentType: "application/strategic-merge-patch+json", body: { metadata } },
          apply: (object) => changeFinalizer(object, change),
          signal,
        });
        return "patched";
      } catch (error) {
        if (hasStatus(error, 404)) return "gone";
        if (!hasStatus(error, 409) || attempt >= UPDATE_CONFLICT_TRIES) throw error;
      }
    }
  }

  /**
   * Deletes a PV object; one that is already gone counts as deleted. With
   * `uid`, only that very object: another of the same name is "gone" too.
   */
  async deletePersistentVolume(
    pvName: string,
    signal?: AbortSignal,
    uid?: string,
  ): Promise<"deleted" | "gone"> {
    return await this.#delete(`/api/v1/persistentvolumes/${pvName}`, uid, signal);
  }

  /**
   * Deletes a claim, only the one with this UID. A refusal (RBAC without
   * delete on claims, as upstream's rbac.yaml; an admission policy) comes
   * back with the server's message: the caller says so.
   */
  async deleteClaim(
    ref: { namespace: string; name: string; uid: string },
    signal?: AbortSignal,
  ): Promise<"deleted" | "gone" | { forbidden: string }> {
    try {
      return await this.#delete(claimPath(ref), ref.uid, signal);
    } catch (error) {
      if (hasStatus(error, 403)) return { forbidden: (error as Error).message };
      throw error;
    }
  }

  async #delete(
    path: string,
    uid: string | undefined,
    signal?: AbortSignal,
  ): Promise<"deleted" | "gone"> {
    try {
      await this.#rest.request({
        method: "DELETE",
        path,
        ...(uid === undefined ? {} : { body: { preconditions: { uid } } }),
        ...(signal === undefined ? {} : { signal }),
      });
      return "deleted";
    } catch (error) {
      if (hasStatus(error, 404) || (uid !== undefined && hasStatus(error, 409))) return "gone";
      throw error;
    }
  }

  /**
   * Adds or removes a finalizer of a claim with a strategic merge patch,
   * which merges metadata.finalizers by value: no read, no conflict, and
   * agents that do the same at once do not overwrite each other. Where RBAC
   * grants only update (upstream's rbac.yaml), it is upstream's Update.
   */
  async changeClaimFinalizer(
    ref: { namespace: string; name: string },
    change: { finalizer: string; action: "add" | "remove" },
    signal?: AbortSignal,
  ): Promise<"patched" | "gone"> {
    return await this.#patchFinalizers(
      { resource: "persistentvolumeclaims", path: claimPath(ref) },
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
      patches: this.#patches,
    });
  }

  /** Whether the agent may list VolumeSnapshots (false on 403). */
  /** Whether VolumeSnapshots are served; asked again while they are not. */
  snapshotsServed(): Promise<boolean> {
    return this.#snapshots.served();
  }

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
