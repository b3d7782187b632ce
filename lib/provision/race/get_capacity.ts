/**
 * The GetCapacity call of the Immediate binding race (upstream's
 * checkCapacity in pkg/controller/controller.go): before this node claims a
 * volume, ask its driver whether the volume fits. Upstream's call has no
 * deadline (it runs on the worker's context); here it is bounded by
 * --timeout, and a driver that does not answer in time (or is unavailable)
 * makes this node sit the round out instead of claiming a volume its driver
 * may never create.
 */
import type { Clock } from "../../queue/clock.ts";
import { CsiError } from "../../csi/status.ts";
import type { GetCapacityRequest, GetCapacityResponse, Topology } from "../../csi/types.ts";
import type { Claim, StorageClass } from "../../model/objects.ts";
import { prepareProvision, type ProvisionOptions } from "../request/request.ts";

/** The CSI call this module makes. */
export interface GetCapacityCsi {
  getCapacity(request: GetCapacityRequest, signal: AbortSignal): Promise<GetCapacityResponse>;
}

/** What the driver said. */
export type CapacityAnswer =
  /** Some topology has room (or the request is 0). */
  /** `availableBytes`: what GetCapacity said, when it was asked. */
  | { kind: "fits"; availableBytes?: bigint }
  /** No topology has room: the most any of them has. */
  | { kind: "short"; availableBytes: bigint }
  /** No answer in time, or the driver is unavailable: sit this round out. */
  | { kind: "failed"; message: string }
  /**
   * Unknown: the driver has no GET_CAPACITY, the request cannot be
   * built, or GetCapacity failed otherwise. As upstream, proceed: the
   * provisioning attempt then reports the problem on the claim.
   */
  | { kind: "unknown"; message: string };

/** How the call runs. */
export interface GetCapacityOptions {
  prepare: ProvisionOptions;
  /** The driver has GET_CAPACITY. */
  getCapacity: boolean;
  timeoutMs: number;
  clock: Clock;
}

/** Asks GetCapacity for each requisite topology (once without one) until one has room. */
export async function askCapacity(
  target: { claim: Claim; storageClass: StorageClass; requestBytes: bigint },
  deps: { csi: GetCapacityCsi; options: GetCapacityOptions },
  signal: AbortSignal,
): Promise<CapacityAnswer> {
  const { options } = deps;
  if (!options.getCapacity) return { kind: "unknown", message: "the driver has no GET_CAPACITY" };
  if (target.requestBytes <= 0n) return { kind: "fits" };
  // GetCapacity takes no mutable parameters, so the VolumeAttributesClass is not read here.
  const plan = prepareProvision(target, {
    ...options.prepare,
    volumeAttributesClassEnabled: false,
  });
  if (plan.kind !== "plan") {
    return { kind: "unknown", message: plan.kind === "problem" ? plan.message : plan.kind };
  }
  const requisite = plan.request.accessibility_requirements?.requisite ?? [];
  const topologies: (Topology | null)[] = requisite.length > 0 ? requisite : [null];
  const timeout = new AbortController();
  const cancelTimer = options.clock.schedule(() => timeout.abort(), options.timeoutMs);
  const deadline = AbortSignal.any([signal, timeout.signal]);
  let most = 0n;
  try {
    for (const topology of topologies) {
      const response = await deps.csi.getCapacity({
        volume_capabilities: plan.request.volume_capabilities,
        parameters: plan.request.parameters,
        accessible_topology: topology,
      }, deadline);
      const available = fitting(response);
      if (available >= target.requestBytes) return { kind: "fits", availableBytes: available };
      if (available > most) most = available;
    }
    return { kind: "short", availableBytes: most };
  } catch (error) {
    return failure(error, { timedOut: timeout.signal.aborted, timeoutMs: options.timeoutMs });
  } finally {
    cancelTimer();
  }
}

/** What fits in one answer: the available capacity, or the maximum volume size when smaller. */
function fitting(response: GetCapacityResponse): bigint {
  const available = toBigInt(response.available_capacity);
  const maximum = response.maximum_volume_size === null
    ? undefined
    : toBigInt(response.maximum_volume_size.value);
  return maximum !== undefined && maximum < available ? maximum : available;
}

function toBigInt(text: string): bigint {
  return /^\d+$/.test(text) ? BigInt(text) : 0n;
}

function failure(
  error: unknown,
  context: { timedOut: boolean; timeoutMs: number },
): CapacityAnswer {
  if (context.timedOut) {
    return { kind: "failed", message: `GetCapacity did not answer within ${context.timeoutMs} ms` };
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof CsiError && ["DeadlineExceeded", "Unavailable"].includes(error.codeName)) {
    return { kind: "failed", message: `GetCapacity failed: ${message}` };
  }
  return { kind: "unknown", message: `GetCapacity failed: ${message}` };
}
