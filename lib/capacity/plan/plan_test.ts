import { deepStrictEqual } from "node:assert/strict";
import type { OwnerReference } from "../../model/objects.ts";
import { type CapacityPlan, type CapacityPlanInput, planCapacityChanges } from "./plan.ts";
import { capacityObject, GiB } from "../../../tests/builders/capacity.ts";
import { LABELS, SEGMENT, TOPOLOGY_KEY } from "../../../tests/builders/provision.ts";

const NODE_OWNER: OwnerReference = {
  apiVersion: "v1",
  kind: "Node",
  name: "node-a",
  uid: "node-uid",
  controller: true,
};
const POD_OWNER: OwnerReference = {
  apiVersion: "v1",
  kind: "Pod",
  name: "csi-provisioner-abcde",
  uid: "pod-uid",
  controller: true,
};

function wanted(
  availableBytes: bigint,
  options: { maximumVolumeSizeBytes?: bigint; owner?: OwnerReference } = {},
): NonNullable<CapacityPlanInput["wanted"]> {
  const observed = options.maximumVolumeSizeBytes === undefined
    ? { availableBytes }
    : { availableBytes, maximumVolumeSizeBytes: options.maximumVolumeSizeBytes };
  return { segment: SEGMENT, observed, labels: LABELS, owner: options.owner };
}

const cases: { name: string; input: CapacityPlanInput; expected: CapacityPlan }[] = [
  {
    name: "no object yet: create one with generateName, labels, topology and capacity",
    input: {
      storageClassName: "fast",
      wanted: wanted(10n * GiB, { maximumVolumeSizeBytes: 2n * GiB, owner: NODE_OWNER }),
      objects: [],
    },
    expected: {
      removals: [],
      write: {
        kind: "create",
        object: {
          metadata: { generateName: "csisc-", labels: LABELS, ownerReferences: [NODE_OWNER] },
          storageClassName: "fast",
          nodeTopology: { matchLabels: { [TOPOLOGY_KEY]: "node-a" } },
          capacity: "10Gi",
          maximumVolumeSize: "2Gi",
        },
      },
    },
  },
  {
    name: "zero capacity is published too; no maximumVolumeSize unless the driver gave one",
    input: { storageClassName: "fast", wanted: wanted(0n), objects: [] },
    expected: {
      removals: [],
      write: {
        kind: "create",
        object: {
          metadata: { generateName: "csisc-", labels: LABELS },
          storageClassName: "fast",
          nodeTopology: { matchLabels: SEGMENT },
          capacity: "0",
        },
      },
    },
  },
  {
    name: "same capacity written differently (10Gi vs bytes): adopted, no write",
    input: {
      storageClassName: "fast",
      wanted: wanted(10n * GiB),
      objects: [capacityObject("csisc-a", { capacity: String(10n * GiB) })],
    },
    expected: { current: capacityObject("csisc-a", { capacity: String(10n * GiB) }), removals: [] },
  },
  {
    name: "capacity changed: one update carrying the cached resourceVersion",
    input: {
      storageClassName: "fast",
      wanted: wanted(9n * GiB),
      objects: [capacityObject("csisc-a", { resourceVersion: "42" })],
    },
    expected: {
      current: capacityObject("csisc-a", { resourceVersion: "42" }),
      removals: [],
      write: {
        kind: "update",
        name: "csisc-a",
        resourceVersion: "42",
        change: { capacity: "9Gi", maximumVolumeSize: null },
        reasons: ["capacity"],
      },
    },
  },
  {
    name: "maximumVolumeSize gone from the answer: removed",
    input: {
      storageClassName: "fast",
      wanted: wanted(10n * GiB),
      objects: [capacityObject("csisc-a", { maximumVolumeSize: "1Gi" })],
    },
    expected: {
      current: capacityObject("csisc-a", { maximumVolumeSize: "1Gi" }),
      removals: [],
      write: {
        kind: "update",
        name: "csisc-a",
        resourceVersion: "10",
        change: { capacity: "10Gi", maximumVolumeSize: null },
        reasons: ["maximumVolumeSize"],
      },
    },
  },
  {
    name: "owner missing: our controller replaces another controller, other owners stay",
    input: {
      storageClassName: "fast",
      wanted: wanted(10n * GiB, { owner: NODE_OWNER }),
      objects: [capacityObject("csisc-a", {
        ownerReferences: [POD_OWNER, { ...POD_OWNER, uid: "keep", controller: false }],
      })],
    },
    expected: {
      current: capacityObject("csisc-a", {
        ownerReferences: [POD_OWNER, { ...POD_OWNER, uid: "keep", controller: false }],
      }),
      removals: [],
      write: {
        kind: "update",
        name: "csisc-a",
        resourceVersion: "10",
        change: {
          capacity: "10Gi",
          maximumVolumeSize: null,
          ownerReferences: [{ ...POD_OWNER, uid: "keep", controller: false }, NODE_OWNER],
        },
        reasons: ["owner"],
      },
    },
  },
  {
    name: "no owner configured (-1): existing owners are left alone",
    input: {
      storageClassName: "fast",
      wanted: wanted(10n * GiB),
      objects: [capacityObject("csisc-a", { ownerReferences: [POD_OWNER] })],
    },
    expected: {
      current: capacityObject("csisc-a", { ownerReferences: [POD_OWNER] }),
      removals: [],
    },
  },
  {
    name: "duplicates: the oldest stays, the younger ones go; other classes are not looked at",
    input: {
      storageClassName: "fast",
      wanted: wanted(10n * GiB),
      objects: [
        capacityObject("csisc-young", { created: "2026-01-02T00:00:00Z" }),
        capacityObject("csisc-old", { created: "2026-01-01T00:00:00Z" }),
        capacityObject("csisc-old-b", { created: "2026-01-01T00:00:00Z" }),
        capacityObject("csisc-other", { storageClassName: "slow" }),
      ],
    },
    expected: {
      current: capacityObject("csisc-old", { created: "2026-01-01T00:00:00Z" }),
      removals: [
        { name: "csisc-old-b", uid: "uid-csisc-old-b", reason: "duplicate" },
        { name: "csisc-young", uid: "uid-csisc-young", reason: "duplicate" },
      ],
    },
  },
  {
    name: "another segment (the node's topology changed): obsolete, and a new object is created",
    input: {
      storageClassName: "fast",
      wanted: wanted(1n * GiB),
      objects: [capacityObject("csisc-stale", { segment: { [TOPOLOGY_KEY]: "old-name" } })],
    },
    expected: {
      removals: [{ name: "csisc-stale", uid: "uid-csisc-stale", reason: "obsolete" }],
      write: {
        kind: "create",
        object: {
          metadata: { generateName: "csisc-", labels: LABELS },
          storageClassName: "fast",
          nodeTopology: { matchLabels: SEGMENT },
          capacity: "1Gi",
        },
      },
    },
  },
  {
    name: "class no longer wanted: every object of the class goes",
    input: {
      storageClassName: "fast",
      objects: [
        capacityObject("csisc-a"),
        capacityObject("csisc-b"),
        capacityObject("csisc-c", {
          storageClassName: "slow",
        }),
      ],
    },
    expected: {
      removals: [
        { name: "csisc-a", uid: "uid-csisc-a", reason: "obsolete" },
        { name: "csisc-b", uid: "uid-csisc-b", reason: "obsolete" },
      ],
    },
  },
  {
    name: "an object already being deleted is neither kept nor deleted again",
    input: {
      storageClassName: "fast",
      wanted: wanted(10n * GiB),
      objects: [capacityObject("csisc-going", { deleting: true })],
    },
    expected: {
      removals: [],
      write: {
        kind: "create",
        object: {
          metadata: { generateName: "csisc-", labels: LABELS },
          storageClassName: "fast",
          nodeTopology: { matchLabels: SEGMENT },
          capacity: "10Gi",
        },
      },
    },
  },
  {
    name: "an unreadable capacity is rewritten",
    input: {
      storageClassName: "fast",
      wanted: wanted(5n * GiB, { maximumVolumeSizeBytes: 5n * GiB }),
      objects: [capacityObject("csisc-a", { capacity: "lots", maximumVolumeSize: "5Gi" })],
    },
    expected: {
      current: capacityObject("csisc-a", { capacity: "lots", maximumVolumeSize: "5Gi" }),
      removals: [],
      write: {
        kind: "update",
        name: "csisc-a",
        resourceVersion: "10",
        change: { capacity: "5Gi", maximumVolumeSize: "5Gi" },
        reasons: ["capacity"],
      },
    },
  },
];

for (const { name, input, expected } of cases) {
  Deno.test(`planCapacityChanges(): ${name}`, () => {
    deepStrictEqual(planCapacityChanges(input), expected);
  });
}
