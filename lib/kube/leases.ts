/**
 * The agents' Leases (coordination.k8s.io/v1) on the wire: the trim of the
 * informer every agent runs over its driver's Leases, and the renewal of its
 * own. Renewals read, then create or replace (get, create, update: the verbs
 * upstream's RBAC grants on leases for leader election).
 */
import { DRIVER_NAME_LABEL, MANAGED_BY_LABEL } from "../model/keys.ts";
import { type AgentLease, ANN_NODE_GONE_SINCE, leaseNotes, microTime } from "../model/lease.ts";
import type { Logger } from "../log/logger.ts";
import { Informer, type RawObject } from "./informer/informer.ts";
import type { KubeRest } from "./rest/client.ts";
import { hasStatus } from "./rest/types.ts";

/** Collection path of the Leases in a namespace. */
function leasesPath(namespace: string): string {
  return `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
}

interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    renewTime?: string;
    acquireTime?: string;
  };
}

/** An agent's Lease as the others keep it; one without the labels or a renewal is none. */
export function trimAgentLease(raw: RawObject): AgentLease | undefined {
  const lease = raw as unknown as LeaseObject;
  const publisher = lease.metadata.labels?.[MANAGED_BY_LABEL];
  const { holderIdentity, renewTime, leaseDurationSeconds } = lease.spec ?? {};
  if (publisher === undefined || holderIdentity === undefined || renewTime === undefined) {
    return undefined;
  }
  if (lease.metadata.deletionTimestamp !== undefined) return undefined;
  return {
    name: lease.metadata.name,
    resourceVersion: lease.metadata.resourceVersion ?? "",
    node: holderIdentity,
    publisher,
    renewTime,
    durationMs: (leaseDurationSeconds ?? 0) * 1000,
    ...leaseNotes(lease.metadata.annotations),
  };
}

/** Creates (does not start) the informer of the driver's agents' Leases in the namespace. */
export function createLeaseCache(
  rest: KubeRest,
  options: { namespace: string; driverName: string; logger: Logger; idleTimeoutMs?: number },
): Informer<AgentLease> {
  return new Informer<AgentLease>(rest, {
    resource: "leases",
    path: leasesPath(options.namespace),
    labelSelector: `${DRIVER_NAME_LABEL}=${options.driverName}`,
    trim: trimAgentLease,
    resourceVersionOf: (lease) => lease.resourceVersion,
    logger: options.logger,
    cutManagedFields: true,
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
  });
}

/**
 * The Leases of these agents (by managed-by value) of the driver: one list,
 * served from kube-apiserver's watch cache (resourceVersion 0).
 */
export async function listAgentLeases(
  rest: KubeRest,
  target: { namespace: string; driverName: string; publishers: readonly string[] },
  signal: AbortSignal,
): Promise<AgentLease[]> {
  const selector = `${DRIVER_NAME_LABEL}=${target.driverName},${MANAGED_BY_LABEL} in (${
    target.publishers.join(",")
  })`;
  const list = await rest.request<{ items?: RawObject[] }>({
    method: "GET",
    path: leasesPath(target.namespace),
    query: { labelSelector: selector, resourceVersion: "0" },
    withoutManagedFields: true,
    signal,
  });
  return (list.items ?? []).flatMap((raw) => trimAgentLease(raw) ?? []);
}

/** Which Lease an agent renews. */
export interface OwnLease {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  /** spec.holderIdentity: the node's name. */
  holder: string;
  durationSeconds: number;
  /** Written on every renewal; the node-gone-since note of a watcher is dropped. */
  annotations: Record<string, string>;
}

/**
 * Renews one Lease: replaces the copy last written (its resourceVersion a
 * precondition), reading it first when there is none (start-up, a conflict)
 * and creating it when it does not exist.
 */
export class LeaseRenewals {
  readonly #rest: KubeRest;
  readonly #lease: OwnLease;
  #last: LeaseObject | undefined;

  constructor(rest: KubeRest, lease: OwnLease) {
    this.#rest = rest;
    this.#lease = lease;
  }

  /** Writes renewTime = `nowMs`; throws what the API server answered otherwise. */
  async renew(nowMs: number, signal: AbortSignal): Promise<void> {
    const current = this.#last ?? await this.#read(signal);
    try {
      this.#last = current === undefined
        ? await this.#write("POST", this.#fresh(nowMs), signal)
        : await this.#write("PUT", this.#renewed(current, nowMs), signal);
    } catch (error) {
      this.#last = undefined;
      throw error;
    }
  }

  async #read(signal: AbortSignal): Promise<LeaseObject | undefined> {
    try {
      return await this.#rest.request<LeaseObject>({
        method: "GET",
        path: `${leasesPath(this.#lease.namespace)}/${this.#lease.name}`,
        signal,
      });
    } catch (error) {
      if (hasStatus(error, 404)) return undefined;
      throw error;
    }
  }

  #write(method: "POST" | "PUT", body: LeaseObject, signal: AbortSignal): Promise<LeaseObject> {
    const path = leasesPath(this.#lease.namespace);
    return this.#rest.request<LeaseObject>({
      method,
      path: method === "POST" ? path : `${path}/${this.#lease.name}`,
      body,
      signal,
    });
  }

  #fresh(nowMs: number): LeaseObject {
    const { name, namespace, labels } = this.#lease;
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name, namespace, labels, annotations: this.#lease.annotations },
      spec: { ...this.#spec(nowMs), acquireTime: microTime(nowMs) },
    };
  }

  #renewed(current: LeaseObject, nowMs: number): LeaseObject {
    return {
      ...current,
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        ...current.metadata,
        labels: { ...current.metadata.labels, ...this.#lease.labels },
        annotations: {
          ...withoutGoneSince(current.metadata.annotations),
          ...this.#lease.annotations,
        },
      },
      spec: { ...current.spec, ...this.#spec(nowMs) },
    };
  }

  #spec(nowMs: number) {
    return {
      holderIdentity: this.#lease.holder,
      leaseDurationSeconds: this.#lease.durationSeconds,
      renewTime: microTime(nowMs),
    };
  }
}

/** An agent that renews its Lease runs on a Node that exists: a watcher's note of it is stale. */
function withoutGoneSince(annotations: Record<string, string> | undefined): Record<string, string> {
  const { [ANN_NODE_GONE_SINCE]: _gone, ...rest } = annotations ?? {};
  return rest;
}

/**
 * Sets (a string) or removes (null) annotations of another agent's Lease: a
 * read, then an update with its resourceVersion as precondition. "gone" when
 * the Lease no longer exists, "conflict" when it changed in between.
 */
export async function annotateLease(
  rest: KubeRest,
  target: { namespace: string; name: string; annotations: Record<string, string | null> },
  signal: AbortSignal,
): Promise<"updated" | "gone" | "conflict"> {
  const path = `${leasesPath(target.namespace)}/${target.name}`;
  try {
    const current = await rest.request<LeaseObject>({ method: "GET", path, signal });
    const annotations = { ...current.metadata.annotations };
    for (const [key, value] of Object.entries(target.annotations)) {
      if (value === null) delete annotations[key];
      else annotations[key] = value;
    }
    const body = { ...current, metadata: { ...current.metadata, annotations } };
    await rest.request<LeaseObject>({ method: "PUT", path, body, signal });
    return "updated";
  } catch (error) {
    if (hasStatus(error, 404)) return "gone";
    if (hasStatus(error, 409)) return "conflict";
    throw error;
  }
}
