import { deepStrictEqual } from "node:assert/strict";
import { boundClaim } from "../../tests/builders/resize.ts";
import {
  claimStatusPatch,
  markControllerResizeError,
  markExpansionFinished,
  markNodeExpansionPending,
  markResizeInProgress,
  mergeResizeConditions,
} from "./claim_status.ts";

const NOW = new Date("2026-12-02T13:00:00.123Z");
const T = "2026-12-02T13:00:00Z";

Deno.test("mergeResizeConditions(): other conditions stay, resize ones are replaced or dropped", () => {
  const old = [
    { type: "ModifyingVolume", status: "True" },
    { type: "ControllerResizeError", status: "True", message: "x" },
  ];
  const resizing = { type: "Resizing", status: "True" };
  deepStrictEqual(mergeResizeConditions(old, [resizing], false), [old[0], resizing]);
  deepStrictEqual(mergeResizeConditions(old, [resizing], true), [...old, resizing]);
});

Deno.test("markResizeInProgress() then markNodeExpansionPending(): external-resizer's status writes, as one patch each", () => {
  const claim = boundClaim();
  const marked = markResizeInProgress(claim, "2Gi", { updateStatus: true, now: NOW });
  const resizing = { type: "Resizing", status: "True", lastProbeTime: null, lastTransitionTime: T };
  deepStrictEqual(claimStatusPatch(claim, marked, { resourceVersionCheck: true }), {
    metadata: { resourceVersion: "42" },
    status: {
      conditions: [resizing],
      allocatedResources: { storage: "2Gi" },
      allocatedResourceStatuses: { storage: "ControllerResizeInProgress" },
    },
  });
  const pending = markNodeExpansionPending(marked, NOW);
  deepStrictEqual(claimStatusPatch(marked, pending, { resourceVersionCheck: false }), {
    metadata: {},
    status: {
      conditions: [resizing, {
        type: "FileSystemResizePending",
        status: "True",
        lastProbeTime: null,
        lastTransitionTime: T,
        message:
          "Waiting for user to (re-)start a pod to finish file system resize of volume on node.",
      }],
      allocatedResourceStatuses: { storage: "NodeResizePending" },
    },
  });
});

Deno.test("markControllerResizeError(): infeasible sets the status, any final error the condition", () => {
  const claim = markResizeInProgress(boundClaim(), "2Gi", { updateStatus: true, now: NOW });
  const error = "rpc error: code = OutOfRange desc = too big";
  const infeasible = markControllerResizeError(claim, error, { infeasible: true, now: NOW });
  deepStrictEqual(infeasible.status?.allocatedResourceStatuses, {
    storage: "ControllerResizeInfeasible",
  });
  deepStrictEqual(infeasible.status?.conditions?.map((c) => [c.type, c.message]), [
    ["Resizing", undefined],
    ["ControllerResizeError", `failed to expand pvc with ${error}`],
  ]);
  const final = markControllerResizeError(claim, error, { infeasible: false, now: NOW });
  deepStrictEqual(final.status?.allocatedResourceStatuses, {
    storage: "ControllerResizeInProgress",
  });
});

Deno.test("markExpansionFinished(): the new capacity, no resize condition or status, the annotation", () => {
  const claim = markResizeInProgress(boundClaim(), "2Gi", { updateStatus: true, now: NOW });
  deepStrictEqual(
    claimStatusPatch(claim, markExpansionFinished(claim, "2Gi"), {
      resourceVersionCheck: true,
    }),
    {
      metadata: {
        resourceVersion: "42",
        annotations: { "volume.kubernetes.io/node-expansion-not-required": "true" },
      },
      status: {
        conditions: [],
        capacity: { storage: "2Gi" },
        allocatedResourceStatuses: { storage: null },
      },
    },
  );
});
