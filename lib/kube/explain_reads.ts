/**
 * The reads of `csi-node-provisioner explain`, over the one REST client: one
 * GET or one list per question, nothing cached, nothing written. Missing
 * objects are values (undefined); anything else is thrown as KubeApiError.
 * lib/explain/ports.ts names this surface; main.ts builds it.
 */
import type {
  Claim,
  PersistentVolume,
  StorageClass,
  VolumeAttributesClass,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from "../model/objects.ts";
import type { StorageCapacity } from "../model/storage_capacity.ts";
import type { AgentLease } from "../model/lease.ts";
import type { CoreEvent, Node, Pod } from "../model/workload.ts";
import { DRIVER_NAME_LABEL } from "../model/keys.ts";
import type { RawObject } from "./informer/informer.ts";
import { trimAgentLease } from "./leases.ts";
import type { KubeRest } from "./rest/client.ts";
import { hasStatus } from "./rest/types.ts";
import { readVolumeSnapshot, readVolumeSnapshotContent } from "./snapshots.ts";

/** A list's items (one page: explain reads a limited number). */
interface List<T> {
  items?: T[];
}

/** Lists are cut at this size: an explanation needs no more. */
const LIST_LIMIT = 5000;

/** The reads, bound to one client. */
export class ExplainReader {
  readonly #rest: KubeRest;

  constructor(rest: KubeRest) {
    this.#rest = rest;
  }

  claim(namespace: string, name: string): Promise<Claim | undefined> {
    return this.#get(`/api/v1/namespaces/${enc(namespace)}/persistentvolumeclaims/${enc(name)}`);
  }

  /** Whether the namespace exists; "unknown" when the user may not read namespaces. */
  async namespaceExists(name: string): Promise<boolean | "unknown"> {
    try {
      return (await this.#get(`/api/v1/namespaces/${enc(name)}`)) !== undefined;
    } catch (error) {
      if (hasStatus(error, 403)) return "unknown";
      throw error;
    }
  }

  storageClass(name: string): Promise<StorageClass | undefined> {
    return this.#get(`/apis/storage.k8s.io/v1/storageclasses/${enc(name)}`);
  }

  persistentVolume(name: string): Promise<PersistentVolume | undefined> {
    return this.#get(`/api/v1/persistentvolumes/${enc(name)}`);
  }

  persistentVolumes(): Promise<PersistentVolume[]> {
    return this.#list("/api/v1/persistentvolumes");
  }

  volumeAttributesClass(name: string): Promise<VolumeAttributesClass | undefined> {
    return this.#get(`/apis/storage.k8s.io/v1/volumeattributesclasses/${enc(name)}`);
  }

  volumeSnapshot(namespace: string, name: string): Promise<VolumeSnapshot | undefined> {
    return readVolumeSnapshot(this.#rest, { namespace, name });
  }

  volumeSnapshotContent(name: string): Promise<VolumeSnapshotContent | undefined> {
    return readVolumeSnapshotContent(this.#rest, name);
  }

  nodes(): Promise<Node[]> {
    return this.#list("/api/v1/nodes");
  }

  storageCapacities(): Promise<StorageCapacity[]> {
    return this.#list("/apis/storage.k8s.io/v1/csistoragecapacities");
  }

  /** Pods of a namespace (or every namespace), optionally by label selector. */
  pods(options: { namespace?: string; labelSelector?: string }): Promise<Pod[]> {
    const path = options.namespace === undefined
      ? "/api/v1/pods"
      : `/api/v1/namespaces/${enc(options.namespace)}/pods`;
    return this.#list(path, { labelSelector: options.labelSelector });
  }

  /**
   * The Leases of the driver's agents, every namespace; undefined when they
   * may not be read (403), or cannot be asked for (400: a provisioner name
   * that is no label value has no agents).
   */
  async agentLeases(driverName: string): Promise<AgentLease[] | undefined> {
    try {
      const raw = await this.#list<RawObject>("/apis/coordination.k8s.io/v1/leases", {
        labelSelector: `${DRIVER_NAME_LABEL}=${driverName}`,
      });
      return raw.flatMap((lease) => trimAgentLease(lease) ?? []);
    } catch (error) {
      if (hasStatus(error, 403) || hasStatus(error, 400)) return undefined;
      throw error;
    }
  }

  /** The Events of one object of the namespace. */
  events(namespace: string, object: { kind: string; name: string }): Promise<CoreEvent[]> {
    return this.#list(`/api/v1/namespaces/${enc(namespace)}/events`, {
      fieldSelector: `involvedObject.kind=${object.kind},involvedObject.name=${object.name}`,
    });
  }

  async #get<T>(path: string): Promise<T | undefined> {
    try {
      return await this.#rest.request<T>({ method: "GET", path });
    } catch (error) {
      if (hasStatus(error, 404)) return undefined;
      throw error;
    }
  }

  async #list<T>(path: string, query: Record<string, string | undefined> = {}): Promise<T[]> {
    const list = await this.#rest.request<List<T>>({
      method: "GET",
      path,
      query: { ...query, limit: LIST_LIMIT },
    });
    return list.items ?? [];
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}
