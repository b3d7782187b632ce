/**
 * The only place that reads gRPC statuses: every failed CSI call becomes a
 * CsiError with the code's name as Go spells it (the metric label and the
 * wording operators know from the Go sidecar).
 */

/** gRPC status code names, indexed by code, as Go's codes.Code.String() prints them. */
export const GRPC_CODE_NAMES = [
  "OK",
  "Canceled",
  "Unknown",
  "InvalidArgument",
  "DeadlineExceeded",
  "NotFound",
  "AlreadyExists",
  "PermissionDenied",
  "ResourceExhausted",
  "FailedPrecondition",
  "Aborted",
  "OutOfRange",
  "Unimplemented",
  "Internal",
  "Unavailable",
  "DataLoss",
  "Unauthenticated",
] as const;

/** A gRPC status code name. */
export type GrpcCodeName = (typeof GRPC_CODE_NAMES)[number];

/** Name of a numeric gRPC code ("Unknown" for codes outside the table). */
export function grpcCodeName(code: number): GrpcCodeName {
  return GRPC_CODE_NAMES[code] ?? "Unknown";
}

/** A CSI call that ended with a non-OK status (or never reached the driver). */
export class CsiError extends Error {
  /** Numeric gRPC status code. */
  readonly code: number;
  /** Go's name of the code, e.g. "ResourceExhausted". */
  readonly codeName: GrpcCodeName;
  /** The status message from the driver (or from the local gRPC stack). */
  readonly details: string;

  constructor(method: string, code: number, details: string, options?: { cause?: unknown }) {
    super(`rpc error: code = ${grpcCodeName(code)} desc = ${details}`, options);
    this.name = "CsiError";
    this.code = code;
    this.codeName = grpcCodeName(code);
    this.details = details;
    this.method = method;
  }

  /** Full gRPC method, e.g. "/csi.v1.Controller/CreateVolume". */
  readonly method: string;
}

/** Converts whatever a grpc-js call failed with into a CsiError. */
export function toCsiError(method: string, error: unknown): CsiError {
  if (error instanceof CsiError) return error;
  const record = error as { code?: unknown; details?: unknown; message?: unknown } | null;
  const code = typeof record?.code === "number" ? record.code : 2;
  const details = typeof record?.details === "string"
    ? record.details
    : typeof record?.message === "string"
    ? record.message
    : String(error);
  return new CsiError(method, code, details, { cause: error });
}
