/**
 * Volume expansion's view of the cluster: the claims bound to this node's
 * PVs, with the status fields external-resizer reads (the provisioning
 * cache drops bound claims), the writes of an expansion, and the
 * leader-election Lease by which a central external-resizer of the same
 * driver is found.
 */
import type { Logger } from "../log/logger.ts";
import type { Claim, ClaimStatus } from "../model/objects.ts";
import { Informer, type RawObject } from "./informer/informer.ts";
import type { KubeRest } from "./rest/client.ts";
import { hasStatus } from "./rest/types.ts";
import { trimClaim } from "./trim.ts";

const STATUS_FIELDS = [
  "phase",
  "capacity",
  "conditions",
  "allocatedResources",
  "allocatedResourceStatuses",
] as const;

/** A claim with the status fields expansion reads; undefined for a claim not bound to a PV `keep` accepts. */
export function trimResizeClaim(
  raw: RawObject,
  keep: (volumeName: string) => boolean,
): Claim | undefined {
  const volumeName = (raw["spec"] as Claim["spec"] | undefined)?.volumeName ?? "";
  if (volumeName === "" || !keep(volumeName)) return undefined;
  const claim = trimClaim(raw, { nodeName: "", keepAll: true });
  if (claim === undefined) return undefined;
  const source = (raw["status"] ?? {}) as Record<string, unknown>;
  const status: Record<string, unknown> = {};
  for (const field of STATUS_FIELDS) if (source[field] !== undefined) status[field] = source[field];
  return { ...claim, status: status as ClaimStatus };
}

/**
 * Creates (does not start) the informer of the claims bound to this node's
 * PVs. `isOurVolume` reads the PV cache at each event, so it must have
 * synced before this informer lists; a claim bound later is kept from the
 * first change after its PV is in the cache (a resize request is one).
 */
export function createResizeClaimCache(
  rest: KubeRest,
  options: { isOurVolume: (name: string) => boolean; logger: Logger; idleTimeoutMs?: number },
): Informer<Claim> {
  return new Informer(rest, {
    resource: "persistentvolumeclaims",
    path: "/api/v1/persistentvolumeclaims",
    trim: (raw) => trimResizeClaim(raw, options.isOurVolume),
    resourceVersionOf: (claim) => claim.metadata.resourceVersion,
    logger: options.logger,
    cutManagedFields: true,
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
  });
}

/** The writes of an expansion. */
export class ResizeWrites {
  readonly #rest: KubeRest;

  constructor(rest: KubeRest) {
    this.#rest = rest;
  }

  /** A merge patch of the claim's status subresource; the claim written. */
  async patchClaimStatus(
    claim: Claim,
    patch: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<Claim> {
    const { namespace, name } = claim.metadata;
    const raw = await this.#rest.request<RawObject>({
      method: "PATCH",
      path: `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${name}/status`,
      contentType: "application/merge-patch+json",
      body: patch,
      withoutManagedFields: true,
      ...(signal === undefined ? {} : { signal }),
    });
    return trimResizeClaim(raw, () => true) ?? claim;
  }

  /** Sets the PV's spec.capacity.storage (a merge patch). */
  async patchVolumeCapacity(pvName: string, capacity: string, signal?: AbortSignal): Promise<void> {
    await this.#rest.request({
      method: "PATCH",
      path: `/api/v1/persistentvolumes/${pvName}`,
      contentType: "application/merge-patch+json",
      body: { spec: { capacity: { storage: capacity } } },
      unread: true,
      ...(signal === undefined ? {} : { signal }),
    });
  }
}

/** external-resizer's leader-election Lease name for a driver (util.SanitizeName, twice). */
export function resizerLeaseName(driverName: string): string {
  const name = `external-resizer-${driverName.replace(/[^a-zA-Z0-9-]/g, "-")}`;
  return name.endsWith("-") ? `${name}X` : name;
}

/** A central external-resizer's Lease as read: who holds it and when it was last renewed. */
export interface ResizerLease {
  name: string;
  holder: string;
  renewTime: string | undefined;
  durationSeconds: number;
}

/** Reads external-resizer's Lease for the driver in `namespace`; undefined when there is none. */
export async function readResizerLease(
  rest: KubeRest,
  options: { namespace: string; driverName: string },
  signal?: AbortSignal,
): Promise<ResizerLease | undefined> {
  const name = resizerLeaseName(options.driverName);
  try {
    const lease = await rest.request<{
      spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
    }>({
      method: "GET",
      path: `/apis/coordination.k8s.io/v1/namespaces/${options.namespace}/leases/${name}`,
      ...(signal === undefined ? {} : { signal }),
    });
    return {
      name,
      holder: lease.spec?.holderIdentity ?? "",
      renewTime: lease.spec?.renewTime,
      durationSeconds: lease.spec?.leaseDurationSeconds ?? 15,
    };
  } catch (error) {
    if (hasStatus(error, 404)) return undefined;
    throw error;
  }
}
