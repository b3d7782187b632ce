import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { boundClaim, boundVolume } from "../../tests/builders/resize.ts";
import { DRIVER } from "../../tests/builders/provision.ts";
import { decideExpansion, type ExpansionInput, failureKind } from "./decide.ts";

function input(overrides: Partial<ExpansionInput> = {}): ExpansionInput {
  return {
    claim: boundClaim(),
    pv: boundVolume(),
    driverName: DRIVER,
    allowVolumeExpansion: true,
    finalError: false,
    slowRemainingMs: undefined,
    ...overrides,
  };
}

Deno.test("decideExpansion(): a request above the PV is expanded to it, recorded as a new target", () => {
  deepStrictEqual(decideExpansion(input()), {
    kind: "expand",
    size: "2Gi",
    bytes: 2n ** 31n,
    updateStatus: true,
  });
});

Deno.test("decideExpansion(): claims that are not the resizer's business are left alone", () => {
  const cases: [Partial<ExpansionInput>, string][] = [
    [{ claim: boundClaim({ request: "1Gi" }) }, "request not above the claim's capacity"],
    [{ claim: boundClaim({ status: { phase: "Pending" } }) }, "not bound"],
    [{ allowVolumeExpansion: false }, "class does not allow volume expansion"],
    [{ driverName: "other.csi.k8s.io" }, "volume of another driver"],
    [
      { pv: { ...boundVolume(), spec: { ...boundVolume().spec, claimRef: { uid: "x" } } } },
      "volume not bound to this claim",
    ],
  ];
  for (const [overrides, why] of cases) {
    deepStrictEqual(decideExpansion(input(overrides)), { kind: "none", why });
  }
});

Deno.test("decideExpansion(): after a restart mid-call, the recorded size is finished, not the new request", () => {
  const claim = boundClaim({
    request: "5Gi",
    status: {
      allocatedResources: { storage: "2Gi" },
      allocatedResourceStatuses: { storage: "ControllerResizeInProgress" },
    },
  });
  deepStrictEqual(decideExpansion(input({ claim })), {
    kind: "expand",
    size: "2Gi",
    bytes: 2n ** 31n,
    updateStatus: false,
  });
  // After a final error of the last call, the request wins.
  const after = decideExpansion(input({ claim, finalError: true }));
  strictEqual(after.kind === "expand" && after.size, "5Gi");
});

Deno.test("decideExpansion(): an infeasible size waits in the slow set; a lowered request recovers at once", () => {
  const failed = {
    allocatedResources: { storage: "100Gi" },
    allocatedResourceStatuses: { storage: "ControllerResizeInfeasible" },
  };
  const same = decideExpansion(
    input({ claim: boundClaim({ request: "100Gi", status: failed }), slowRemainingMs: 1000 }),
  );
  strictEqual(same.kind, "wait");
  strictEqual(same.kind === "wait" && same.ms, 1000);
  const lowered = decideExpansion(
    input({ claim: boundClaim({ request: "3Gi", status: failed }), slowRemainingMs: 1000 }),
  );
  deepStrictEqual(lowered, {
    kind: "expand",
    size: "3Gi",
    bytes: 3n * 2n ** 30n,
    updateStatus: true,
  });
});

Deno.test("decideExpansion(): once the PV has grown, a pending node expansion is left to the kubelet", () => {
  const claim = boundClaim({
    status: {
      allocatedResources: { storage: "2Gi" },
      allocatedResourceStatuses: { storage: "NodeResizePending" },
    },
  });
  strictEqual(decideExpansion(input({ claim, pv: boundVolume("2Gi") })).kind, "none");
  // A PV grown but the claim never told (the agent stopped in between): the write is resumed.
  const recorded = boundClaim({
    status: {
      allocatedResources: { storage: "2Gi" },
      allocatedResourceStatuses: { storage: "ControllerResizeInProgress" },
    },
  });
  const resumed = decideExpansion(input({ claim: recorded, pv: boundVolume("2Gi") }));
  strictEqual(resumed.kind === "expand" && resumed.size, "2Gi");
});

Deno.test("failureKind(): the gRPC codes after which the volume may still change are not final", () => {
  deepStrictEqual(
    ["DeadlineExceeded", "Unavailable", "OutOfRange", "NotFound", "Internal", undefined].map(
      failureKind,
    ),
    ["transient", "transient", "infeasible", "infeasible", "final", "transient"],
  );
});
