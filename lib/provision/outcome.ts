/**
 * What a provisioning attempt ended in, and the one place that maps a failed
 * CreateVolume call to it: the port of external-provisioner's `checkError`
 * (pkg/controller/controller.go) and of sig-storage-lib-external-provisioner's
 * `ProvisioningState` (controller/volume.go).
 */
import type { GrpcCodeName } from "../csi/status.ts";

/**
 * Where a provisioning attempt stands. The controller keeps a claim in its
 * "in progress" set exactly while the last attempt said `inBackground`, so
 * that a claim deleted meanwhile is still retried until the driver gives a
 * final answer (and no volume leaks).
 */
export type ProvisioningState =
  /**
   * The operation is over: the volume was created (and a PV will be saved),
   * or the failure is final for this attempt; nothing is running in the
   * driver. On failure the claim is retried with backoff; the claim leaves
   * the in-progress set.
   */
  | "finished"
  /**
   * The driver may still be creating the volume (timeout, cancellation,
   * unavailable, or we could not tell). The claim must be retried, even if it
   * is deleted in the meantime, until the answer is `finished`.
   */
  | "inBackground"
  /**
   * Nothing reached the driver (a precondition failed before CreateVolume);
   * the in-progress set is left as it was, because an earlier attempt may
   * still be running.
   */
  | "noChange"
  /**
   * The driver cannot provision here (ResourceExhausted with a selected
   * node): remove the `volume.kubernetes.io/selected-node` annotation so the
   * scheduler picks another node. Without that annotation it counts as
   * `finished`.
   */
  | "reschedule";

/** How soon the claim is retried after a problem. */
export type Retry =
  /** Rate-limited exponential backoff (--retry-interval-start … --retry-interval-max). */
  | "backoff"
  /**
   * The "infeasible" slow set: no new attempt for 5 minutes (the slow set
   * of sig-storage-lib-external-provisioner's controller.go, which an
   * InvalidArgument answer puts the claim in).
   */
  | "slow";

/**
 * Bad input or a failed attempt, as a value. `message` goes as is into a
 * Warning Event with `reason`; it names the object and the field, and never
 * contains secret data.
 */
export interface Problem {
  kind: "problem";
  reason: "ProvisioningFailed";
  message: string;
  retry: Retry;
  /** The state upstream returns for this failure. */
  state: ProvisioningState;
}

/** What a CreateVolume call failed with: a gRPC status code, or something that is not a status. */
export type CreateVolumeFailure = GrpcCodeName | "not a gRPC status";

/** Builds a problem; `state` defaults to `finished`, `retry` to `backoff`. */
export function problem(
  message: string,
  options: { state?: ProvisioningState; retry?: Retry } = {},
): Problem {
  return {
    kind: "problem",
    reason: "ProvisioningFailed",
    message,
    retry: options.retry ?? "backoff",
    state: options.state ?? "finished",
  };
}

/**
 * `checkError`: the provisioning state after a failed CreateVolume.
 * `mayReschedule` is true when topology is supported and the claim has a
 * selected node (in node mode: always, once we provision).
 */
export function classifyCreateError(
  failure: CreateVolumeFailure,
  options: { mayReschedule: boolean },
): ProvisioningState {
  switch (failure) {
    case "not a gRPC status":
      // The call failed before reaching gRPC, so an earlier CreateVolume may
      // still be running: be on the safe side.
      return "inBackground";
    case "ResourceExhausted":
      // CSI: "Unable to provision in `accessible_topology`". It could also be
      // a transport message-size limit; like upstream's checkError
      // (pkg/controller/controller.go) we assume the limits are large enough
      // that the driver sent it.
      return options.mayReschedule ? "reschedule" : "finished";
    case "Canceled": // gRPC: the client cancelled the request
    case "DeadlineExceeded": // gRPC: the deadline expired, the operation may go on
    case "Unavailable": // gRPC: the server is not ready; the call may have been received
    case "Aborted": // CSI: an operation for this volume is already pending
      return "inBackground";
    default:
      // Every other code is final for this attempt: the driver is not working on it.
      return "finished";
  }
}

/**
 * Whether the failure is "infeasible": gRPC InvalidArgument, which the
 * driver will answer the same way until the claim or class changes, so the
 * claim goes to the slow-retry set (as upstream does since v6.0.0).
 */
export function isInfeasible(failure: CreateVolumeFailure): boolean {
  return failure === "InvalidArgument";
}

/**
 * The problem a failed CreateVolume becomes. `message` is the error text
 * (`rpc error: code = … desc = …`); infeasible failures get upstream's event
 * wording and the slow retry.
 */
export function createVolumeProblem(
  failure: { code: CreateVolumeFailure; message: string },
  options: { mayReschedule: boolean },
): Problem {
  const state = classifyCreateError(failure.code, options);
  if (isInfeasible(failure.code)) {
    return problem(
      `Volume provisioning failed with infeasible error. Retries will be delayed. ${failure.message}`,
      { state, retry: "slow" },
    );
  }
  return problem(failure.message, { state });
}
