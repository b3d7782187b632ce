import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  desiredClassNames,
  getCapacityRequest,
  isDesiredClass,
  observedCapacity,
} from "./desired.ts";
import { nodeTopology, selectsSegment, sortedSegment } from "./segment.ts";
import { DRIVER, namedClass, SEGMENT, TOPOLOGY_KEY } from "../../../tests/builders/provision.ts";

const OPTIONS = { driverName: DRIVER, immediateBinding: false };

Deno.test("isDesiredClass(): this driver's classes; Immediate ones only with the flag", () => {
  const table: [string, Parameters<typeof isDesiredClass>[0], boolean, boolean][] = [
    ["WaitForFirstConsumer", namedClass("wffc"), true, true],
    ["Immediate", namedClass("now", { volumeBindingMode: "Immediate" }), false, true],
    [
      "no binding mode (not Immediate)",
      namedClass("unset", { volumeBindingMode: undefined }),
      true,
      true,
    ],
    ["another driver", namedClass("other", { provisioner: "other.csi" }), false, false],
    ["no class", undefined, false, false],
  ];
  for (const [name, candidate, without, withFlag] of table) {
    strictEqual(isDesiredClass(candidate, OPTIONS), without, `${name} without the flag`);
    strictEqual(
      isDesiredClass(candidate, { ...OPTIONS, immediateBinding: true }),
      withFlag,
      `${name} with --capacity-for-immediate-binding`,
    );
  }
});

Deno.test("desiredClassNames() lists the desired classes, sorted", () => {
  const classes = [
    namedClass("slow"),
    namedClass("now", { volumeBindingMode: "Immediate" }),
    namedClass("fast"),
    namedClass("foreign", { provisioner: "other.csi" }),
  ];
  deepStrictEqual(desiredClassNames(classes, OPTIONS), ["fast", "slow"]);
  deepStrictEqual(desiredClassNames(classes, { ...OPTIONS, immediateBinding: true }), [
    "fast",
    "now",
    "slow",
  ]);
});

Deno.test("getCapacityRequest(): class parameters without reserved keys, the segment, no capabilities", () => {
  const request = getCapacityRequest(
    namedClass("fast", {
      parameters: {
        kind: "fast",
        "csi.storage.k8s.io/provisioner-secret-name": "secret",
        "csi.storage.k8s.io/fstype": "xfs",
        fstype: "ext4",
      },
    }),
    SEGMENT,
  );
  deepStrictEqual(request, {
    volume_capabilities: [],
    parameters: { kind: "fast", fstype: "ext4" },
    accessible_topology: { segments: { [TOPOLOGY_KEY]: "node-a" } },
  });
  deepStrictEqual(
    getCapacityRequest(namedClass("bare", { parameters: undefined }), SEGMENT)
      .parameters,
    {},
  );
});

Deno.test("observedCapacity() reads int64 strings; maximum_volume_size only when set", () => {
  deepStrictEqual(
    observedCapacity({
      available_capacity: "9223372036854775807",
      maximum_volume_size: { value: "1073741824" },
      minimum_volume_size: null,
    }),
    { availableBytes: 9223372036854775807n, maximumVolumeSizeBytes: 1073741824n },
  );
  deepStrictEqual(
    observedCapacity({
      available_capacity: "0",
      maximum_volume_size: null,
      minimum_volume_size: null,
    }),
    { availableBytes: 0n },
  );
});

Deno.test("the segment is sorted by key; comparison ignores key order and extra keys fail", () => {
  const segment = { zone: "z1", "kubernetes.io/hostname": "node-a", rack: "r7" };
  deepStrictEqual(Object.keys(sortedSegment(segment)), ["kubernetes.io/hostname", "rack", "zone"]);
  deepStrictEqual(Object.keys(nodeTopology(segment).matchLabels ?? {}), [
    "kubernetes.io/hostname",
    "rack",
    "zone",
  ]);
  strictEqual(
    selectsSegment(
      { matchLabels: { rack: "r7", zone: "z1", "kubernetes.io/hostname": "node-a" } },
      segment,
    ),
    true,
  );
  strictEqual(selectsSegment({ matchLabels: { rack: "r7", zone: "z1" } }, segment), false);
  strictEqual(selectsSegment({ matchLabels: { ...segment, extra: "x" } }, segment), false);
  strictEqual(selectsSegment({ matchLabels: { ...segment, zone: "z2" } }, segment), false);
  strictEqual(
    selectsSegment(
      { matchLabels: segment, matchExpressions: [{ key: "a", operator: "Exists" }] },
      segment,
    ),
    false,
  );
  strictEqual(selectsSegment(undefined, segment), false);
  // Upstream's nil topology (an empty selector, which matches every node) cannot arise:
  // the handshake refuses a driver without a segment, and an empty selector never matches one.
  strictEqual(selectsSegment({}, SEGMENT), false);
});
