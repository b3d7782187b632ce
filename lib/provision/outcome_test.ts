import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { GRPC_CODE_NAMES } from "../csi/status.ts";
import {
  classifyCreateError,
  type CreateVolumeFailure,
  createVolumeProblem,
  isInfeasible,
  problem,
  type ProvisioningState,
} from "./outcome.ts";

Deno.test("classifyCreateError() maps every gRPC code as upstream's checkError does", () => {
  const expected: Record<CreateVolumeFailure, [ProvisioningState, ProvisioningState]> = {
    // [mayReschedule = false, mayReschedule = true]
    "not a gRPC status": ["inBackground", "inBackground"],
    OK: ["finished", "finished"],
    Canceled: ["inBackground", "inBackground"],
    Unknown: ["finished", "finished"],
    InvalidArgument: ["finished", "finished"],
    DeadlineExceeded: ["inBackground", "inBackground"],
    NotFound: ["finished", "finished"],
    AlreadyExists: ["finished", "finished"],
    PermissionDenied: ["finished", "finished"],
    ResourceExhausted: ["finished", "reschedule"],
    FailedPrecondition: ["finished", "finished"],
    Aborted: ["inBackground", "inBackground"],
    OutOfRange: ["finished", "finished"],
    Unimplemented: ["finished", "finished"],
    Internal: ["finished", "finished"],
    Unavailable: ["inBackground", "inBackground"],
    DataLoss: ["finished", "finished"],
    Unauthenticated: ["finished", "finished"],
  };
  deepStrictEqual(Object.keys(expected).length, GRPC_CODE_NAMES.length + 1);
  for (const [failure, [fixed, movable]] of Object.entries(expected)) {
    const code = failure as CreateVolumeFailure;
    strictEqual(classifyCreateError(code, { mayReschedule: false }), fixed, failure);
    strictEqual(classifyCreateError(code, { mayReschedule: true }), movable, failure);
  }
});

Deno.test("isInfeasible() is true only for InvalidArgument", () => {
  for (const code of [...GRPC_CODE_NAMES, "not a gRPC status" as const]) {
    strictEqual(isInfeasible(code), code === "InvalidArgument", code);
  }
});

Deno.test("createVolumeProblem() puts infeasible failures in the slow retry with upstream's event text", () => {
  deepStrictEqual(
    createVolumeProblem(
      { code: "InvalidArgument", message: "rpc error: code = InvalidArgument desc = bad kind" },
      { mayReschedule: true },
    ),
    {
      kind: "problem",
      reason: "ProvisioningFailed",
      message:
        "Volume provisioning failed with infeasible error. Retries will be delayed. rpc error: code = InvalidArgument desc = bad kind",
      retry: "slow",
      state: "finished",
    },
  );
});

Deno.test("createVolumeProblem() reports other failures as is, with their state and backoff", () => {
  deepStrictEqual(
    createVolumeProblem(
      { code: "ResourceExhausted", message: "rpc error: code = ResourceExhausted desc = full" },
      { mayReschedule: true },
    ),
    {
      kind: "problem",
      reason: "ProvisioningFailed",
      message: "rpc error: code = ResourceExhausted desc = full",
      retry: "backoff",
      state: "reschedule",
    },
  );
  strictEqual(
    createVolumeProblem({ code: "DeadlineExceeded", message: "x" }, { mayReschedule: true }).state,
    "inBackground",
  );
});

Deno.test("problem() defaults to a final state and backoff", () => {
  deepStrictEqual(problem("bad"), {
    kind: "problem",
    reason: "ProvisioningFailed",
    message: "bad",
    retry: "backoff",
    state: "finished",
  });
});
