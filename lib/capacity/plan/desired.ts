/**
 * Which objects should exist: one per StorageClass of this driver and the
 * node's one segment, leaving out Immediate classes unless
 * --capacity-for-immediate-binding (upstream's pkg/capacity/capacity.go
 * onSCAddOrUpdate); what GetCapacity is asked for each of them (its
 * syncCapacity); and how many there are (its collector's gauges).
 */
import type { GetCapacityRequest, GetCapacityResponse, Segments } from "../../csi/types.ts";
import { CSI_PARAMETER_PREFIX } from "../../model/keys.ts";
import type { StorageClass } from "../../model/objects.ts";
import type { StorageCapacity } from "../../model/storage_capacity.ts";
import { selectsSegment } from "./segment.ts";

/** Which classes get capacity objects. */
export interface DesiredOptions {
  driverName: string;
  /** --capacity-for-immediate-binding */
  immediateBinding: boolean;
}

/**
 * Whether the class gets an object. As upstream: the class's provisioner is
 * this driver, and Immediate classes only with the flag; a class without a
 * binding mode (the API server defaults it, so only a hand-made cache entry
 * lacks one) counts as not Immediate. allowedTopologies is ignored.
 */
export function isDesiredClass(
  storageClass: StorageClass | undefined,
  options: DesiredOptions,
): storageClass is StorageClass {
  if (storageClass === undefined || storageClass.provisioner !== options.driverName) return false;
  return options.immediateBinding || storageClass.volumeBindingMode !== "Immediate";
}

/** Names of the classes that get objects, sorted. */
export function desiredClassNames(
  classes: readonly StorageClass[],
  options: DesiredOptions,
): string[] {
  return classes.filter((candidate) => isDesiredClass(candidate, options))
    .map((candidate) => candidate.metadata.name)
    .sort();
}

/**
 * The GetCapacity request for a class on this node: the class parameters,
 * the segment as accessible_topology, no volume capabilities (upstream since
 * v5.0.0: capacity is assumed not to depend on them).
 *
 * Differs from upstream's syncCapacity on purpose: the reserved
 * `csi.storage.k8s.io/*` keys (secret names, fstype) are removed, as they
 * are from CreateVolume, so the driver sees the same parameters in both
 * calls; upstream passes them through, which makes a driver that validates
 * its parameters fail every GetCapacity of a class with a secret.
 */
export function getCapacityRequest(
  storageClass: StorageClass,
  segment: Segments,
): GetCapacityRequest {
  const parameters: Record<string, string> = {};
  for (const [key, value] of Object.entries(storageClass.parameters ?? {})) {
    if (!key.startsWith(CSI_PARAMETER_PREFIX)) parameters[key] = value;
  }
  return {
    volume_capabilities: [],
    parameters,
    accessible_topology: { segments: { ...segment } },
  };
}

/** What GetCapacity answered, as byte counts. */
export interface ObservedCapacity {
  availableBytes: bigint;
  /** Absent when the driver did not set maximum_volume_size. */
  maximumVolumeSizeBytes?: bigint;
}

/** Reads the response: int64 fields arrive as decimal strings. */
export function observedCapacity(response: GetCapacityResponse): ObservedCapacity {
  const observed: ObservedCapacity = { availableBytes: toBigInt(response.available_capacity) };
  if (response.maximum_volume_size !== null) {
    observed.maximumVolumeSizeBytes = toBigInt(response.maximum_volume_size.value);
  }
  return observed;
}

function toBigInt(text: string): bigint {
  return /^-?\d+$/.test(text) ? BigInt(text) : 0n;
}

/** upstream's three csistoragecapacities_* gauges. */
export interface CapacityCounts {
  /** Objects that should exist. */
  goal: number;
  /** Objects that should exist and do. */
  current: number;
  /** Objects that exist and will be deleted. */
  obsolete: number;
}

/** Counts the objects as upstream's gauges do; objects being deleted are not counted. */
export function countObjects(
  cached: { classes: readonly StorageClass[]; objects: readonly StorageCapacity[] },
  options: { desired: DesiredOptions; segment: Segments },
): CapacityCounts {
  const desired = new Set(desiredClassNames(cached.classes, options.desired));
  const live = cached.objects.filter((object) => object.metadata.deletionTimestamp === undefined);
  const stands = (object: StorageCapacity) =>
    desired.has(object.storageClassName) && selectsSegment(object.nodeTopology, options.segment);
  return {
    goal: desired.size,
    current:
      [...desired].filter((className) =>
        live.some((object) => object.storageClassName === className && stands(object))
      ).length,
    obsolete: live.filter((object) => !stands(object)).length,
  };
}
