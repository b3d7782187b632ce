/**
 * Whether a bound claim of this node's volumes is to be expanded, and to what
 * size: external-resizer v2.2.1's rules with RecoverVolumeExpansionFailure
 * (syncPVC, pvcNeedResize, pvCanBeExpanded and expandAndRecover in its
 * pkg/controller). What only memory holds (a final error of the last call,
 * the slow retry of an infeasible size) is handed in by the controller.
 */
import type { Claim, PersistentVolume } from "../model/objects.ts";
import { parseQuantity } from "../model/quantity.ts";

/** allocatedResourceStatuses values (core/v1 ClaimResourceStatus). */
export const RESIZE_STATUS = {
  controllerInProgress: "ControllerResizeInProgress",
  controllerInfeasible: "ControllerResizeInfeasible",
  nodePending: "NodeResizePending",
  nodeInProgress: "NodeResizeInProgress",
  nodeInfeasible: "NodeResizeInfeasible",
} as const;

/** What the decision reads. */
export interface ExpansionInput {
  claim: Claim;
  pv: PersistentVolume;
  driverName: string;
  /** The class's allowVolumeExpansion; false when the class is gone. */
  allowVolumeExpansion: boolean;
  /** The last ControllerExpandVolume of this claim ended with a final error. */
  finalError: boolean;
  /** An infeasible size is retried only after the slow set's wait: what is left of it, if any. */
  slowRemainingMs: number | undefined;
}

/** What to do. */
export type ExpansionDecision =
  | { kind: "none"; why: string }
  | { kind: "wait"; ms: number; message: string }
  /** Expand to `size` (a quantity as written); `updateStatus`: a new target, recorded as such. */
  | { kind: "expand"; size: string; bytes: bigint; updateStatus: boolean };

function bytesOf(quantity: string | undefined): bigint | undefined {
  if (quantity === undefined) return undefined;
  const parsed = parseQuantity(quantity);
  return parsed.ok ? parsed.value : undefined;
}

/** The claim's storage status (allocatedResourceStatuses.storage), "" when none. */
export function resizeStatusOf(claim: Claim): string {
  return claim.status?.allocatedResourceStatuses?.storage ?? "";
}

/** pvcNeedResize and pvCanBeExpanded: why the claim is none of the resizer's business, if so. */
function notConcerned(input: ExpansionInput): string | undefined {
  const { claim, pv } = input;
  if (claim.status?.phase !== "Bound" || (claim.spec.volumeName ?? "") === "") return "not bound";
  const request = bytesOf(claim.spec.resources?.requests?.storage) ?? 0n;
  const actual = bytesOf(claim.status?.capacity?.storage) ?? 0n;
  if (request <= actual) return "request not above the claim's capacity";
  if (pv.spec.csi?.driver !== input.driverName) return "volume of another driver";
  const ref = pv.spec.claimRef;
  if (ref?.namespace !== claim.metadata.namespace || ref?.uid !== claim.metadata.uid) {
    return "volume not bound to this claim";
  }
  if (!input.allowVolumeExpansion) return "class does not allow volume expansion";
  return undefined;
}

/** The size to expand to, or undefined when the work is left as it is (expandAndRecover). */
function targetSize(input: ExpansionInput): string | undefined {
  const { claim, pv } = input;
  const spec = claim.spec.resources?.requests?.storage ?? "0";
  const allocated = claim.status?.allocatedResources?.storage;
  const status = resizeStatusOf(claim);
  const pvBytes = bytesOf(pv.spec.capacity?.storage) ?? 0n;
  const S = RESIZE_STATUS;
  if (pvBytes < (bytesOf(spec) ?? 0n)) {
    switch (status) {
      case S.nodeInfeasible:
        return allocated ?? spec;
      case S.nodePending:
      case S.nodeInProgress: {
        const size = allocated ?? spec;
        return pvBytes >= (bytesOf(size) ?? 0n) ? undefined : size;
      }
      case S.controllerInProgress:
        return input.finalError ? spec : allocated ?? spec;
      default:
        return spec;
    }
  }
  switch (status) {
    case S.nodeInProgress:
    case S.nodePending:
      return undefined;
    case S.nodeInfeasible:
    case S.controllerInProgress:
    case S.controllerInfeasible:
      return allocated ?? spec;
    default:
      if (status === "" && allocated !== undefined) return allocated;
      return hasFileSystemResizePending(claim) ? undefined : spec;
  }
}

/** The claim has a FileSystemResizePending condition that is True. */
export function hasFileSystemResizePending(claim: Claim): boolean {
  return (claim.status?.conditions ?? []).some((condition) =>
    condition.type === "FileSystemResizePending" && condition.status === "True"
  );
}

/** Decides one sync of a claim. */
export function decideExpansion(input: ExpansionInput): ExpansionDecision {
  const why = notConcerned(input);
  if (why !== undefined) return { kind: "none", why };
  const size = targetSize(input);
  if (size === undefined) return { kind: "none", why: "expansion on the node not finished" };
  const bytes = bytesOf(size);
  if (bytes === undefined) return { kind: "none", why: `size ${size} is not a quantity` };
  const allocated = bytesOf(input.claim.status?.allocatedResources?.storage);
  const sameTarget = allocated !== undefined && allocated === bytes;
  if (sameTarget && input.slowRemainingMs !== undefined) {
    const key = `${input.claim.metadata.namespace}/${input.claim.metadata.name}`;
    return {
      kind: "wait",
      ms: Math.max(0, input.slowRemainingMs),
      message:
        `skipping volume expansion for pvc ${key}, because expansion previously failed with infeasible error`,
    };
  }
  return { kind: "expand", size, bytes, updateStatus: !sameTarget };
}

/** A claim whose expansion was found infeasible waits in the slow set before the same size is tried again. */
export function entersSlowSet(claim: Claim): boolean {
  return resizeStatusOf(claim) === RESIZE_STATUS.controllerInfeasible;
}

/** gRPC codes after which the volume may still be changing (util.IsFinalError's exceptions). */
const NOT_FINAL = new Set([
  "Canceled",
  "DeadlineExceeded",
  "Unavailable",
  "ResourceExhausted",
  "Aborted",
]);
/** gRPC codes that say the size cannot be had (util.IsInfeasibleError). */
const INFEASIBLE = new Set(["InvalidArgument", "OutOfRange", "NotFound"]);

/** How a failed ControllerExpandVolume is recorded: by its gRPC code name, undefined when not from gRPC. */
export function failureKind(codeName: string | undefined): "transient" | "final" | "infeasible" {
  if (codeName === undefined || NOT_FINAL.has(codeName)) return "transient";
  return INFEASIBLE.has(codeName) ? "infeasible" : "final";
}
