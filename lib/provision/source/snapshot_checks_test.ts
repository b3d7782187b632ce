import { deepStrictEqual } from "node:assert/strict";
import type { Claim, VolumeSnapshot, VolumeSnapshotContent } from "../../model/objects.ts";
import type { Read, SnapshotFacts } from "./checks.ts";
import { checkSnapshotSource } from "./snapshot_checks.ts";
import {
  claim,
  SEGMENT,
  SNAPSHOT_HANDLE,
  snapshotContent,
  sourceVolume,
  storageClass,
  TOPOLOGY_KEY,
  volumeSnapshot,
} from "../../../tests/builders/provision.ts";
import {
  ANN_ALLOW_VOLUME_MODE_CHANGE as ALLOW,
  SNAPSHOT_SOURCE_PROTECTION_FINALIZER as PROTECTION,
} from "../../model/keys.ts";

function check(
  facts: {
    snapshot?: Read<VolumeSnapshot>;
    content?: Read<VolumeSnapshotContent> | "none";
    sourceVolume?: SnapshotFacts["sourceVolume"];
  } = {},
  overrides: { claim?: Claim; requestedBytes?: bigint; prevent?: boolean } = {},
) {
  const snapshotFacts: SnapshotFacts = {
    kind: "snapshot",
    snapshot: facts.snapshot ?? { ok: true, value: volumeSnapshot() },
    ...(facts.content === "none"
      ? {}
      : { content: facts.content ?? { ok: true, value: snapshotContent() } }),
    sourceVolume: facts.sourceVolume ?? { ok: true, value: sourceVolume() },
  };
  return checkSnapshotSource(snapshotFacts, {
    claim: overrides.claim ?? claim(),
    storageClass: storageClass(),
    requestedBytes: overrides.requestedBytes ?? 1n << 30n,
    segment: SEGMENT,
    preventVolumeModeConversion: overrides.prevent ?? true,
    sourceName: "snap",
  });
}

const message = (outcome: ReturnType<typeof check>) =>
  outcome.kind === "invalid" ? outcome.message : outcome.kind;
const snapshotWith = (overrides: Parameters<typeof volumeSnapshot>[0]): Read<VolumeSnapshot> => ({
  ok: true,
  value: volumeSnapshot(overrides),
});
const contentWith = (
  overrides: Parameters<typeof snapshotContent>[0],
): Read<VolumeSnapshotContent> => ({ ok: true, value: snapshotContent(overrides) });
const deleting = { deletionTimestamp: "2025-01-01T00:00:00Z" };

Deno.test("checkSnapshotSource() sends the content's snapshot handle, and finds the snapshot on this node", () => {
  deepStrictEqual(check(), {
    kind: "checked",
    contentSource: { snapshot: { snapshot_id: SNAPSHOT_HANDLE } },
    location: { kind: "here" },
    warnings: [],
  });
});

Deno.test("checkSnapshotSource() refuses in upstream's order, with its messages", () => {
  const block = claim({ spec: { volumeMode: "Block" } });
  const prefix = "requested volume apps/data modifies the mode of the source volume but does not " +
    "have permission to do so. ";
  const cases: [string, ReturnType<typeof check>][] = [
    [
      'error getting snapshot snap from api server: volumesnapshots.snapshot.storage.k8s.io "snap" not found',
      check({
        snapshot: {
          ok: false,
          error: 'volumesnapshots.snapshot.storage.k8s.io "snap" not found',
        },
      }),
    ],
    [
      // Being deleted and not bound: deletion is checked first.
      "snapshot snap is being deleted",
      check({ snapshot: snapshotWith({ metadata: deleting, status: {} }), content: "none" }),
    ],
    ["snapshot snap not bound", check({ snapshot: snapshotWith({ status: {} }), content: "none" })],
    [
      "error getting snapshotcontent snapcontent-1 for snapshot snap",
      check({ content: { ok: false, error: "not found" } }),
    ],
    [
      // Bound to another snapshot and of another driver: the binding first.
      "snapshotcontent snapcontent-1 for snapshot snap is bound to a different snapshot",
      check({
        content: contentWith({
          spec: {
            driver: "other.csi",
            volumeSnapshotRef: { namespace: "apps", name: "snap", uid: "another-uid" },
            source: {},
          },
        }),
      }),
    ],
    [
      "snapshotcontent snapcontent-1 for snapshot snap is not handled by CSI driver of StorageClass fast",
      check({ content: contentWith({ spec: { driver: "other.csi" } }) }),
    ],
    [
      "snapshot snap is not Ready",
      check({
        snapshot: snapshotWith({
          status: { boundVolumeSnapshotContentName: "snapcontent-1", readyToUse: false },
        }),
      }),
    ],
    ["snapshot handle snap is not available", check({ content: contentWith({ status: {} }) })],
    [
      "requested volume size 536870912 is less than the size 1073741824 for the source snapshot snap",
      check({}, { requestedBytes: 512n << 20n }),
    ],
    [
      `${prefix}${ALLOW} annotation is not present on snapshotcontent snapcontent-1`,
      check({}, { claim: block }),
    ],
    [
      `${prefix}failed to convert ${ALLOW} annotation value to boolean with error: ` +
      'strconv.ParseBool: parsing "yes": invalid syntax',
      check({ content: contentWith({ metadata: { annotations: { [ALLOW]: "yes" } } }) }, {
        claim: block,
      }),
    ],
    [
      `${prefix}${ALLOW} is set to false on snapshotcontent snapcontent-1`,
      check({ content: contentWith({ metadata: { annotations: { [ALLOW]: "F" } } }) }, {
        claim: block,
      }),
    ],
  ];
  for (const [expected, outcome] of cases) deepStrictEqual(message(outcome), expected);
});

Deno.test("checkSnapshotSource() goes on with a snapshot being deleted that carries the source protection", () => {
  const protectedSnapshot = snapshotWith({ metadata: { ...deleting, finalizers: [PROTECTION] } });
  deepStrictEqual(message(check({ snapshot: protectedSnapshot })), "checked");
});

Deno.test("checkSnapshotSource() restore size: equal or bigger (with upstream's warning), any size without one", () => {
  const bigger = check({}, { requestedBytes: 2n << 30n });
  deepStrictEqual(bigger.kind === "checked" && bigger.warnings, [
    "requested volume size 2147483648 is greater than the size 1073741824 for the source snapshot " +
    "snap. Volume plugin needs to handle volume expansion.",
  ]);
  const unsized = snapshotWith({
    status: { boundVolumeSnapshotContentName: "snapcontent-1", readyToUse: true },
  });
  deepStrictEqual(message(check({ snapshot: unsized }, { requestedBytes: 1n })), "checked");
});

Deno.test("checkSnapshotSource() volume mode: allowed by the annotation, or when the check is off", () => {
  const block = claim({ spec: { volumeMode: "Block" } });
  const allowed = contentWith({ metadata: { annotations: { [ALLOW]: "true" } } });
  deepStrictEqual(message(check({ content: allowed }, { claim: block })), "checked");
  deepStrictEqual(message(check({}, { claim: block, prevent: false })), "checked");
  const unknownMode = snapshotContent();
  delete unknownMode.spec.sourceVolumeMode;
  deepStrictEqual(
    message(check({ content: { ok: true, value: unknownMode } }, { claim: block })),
    "checked",
  );
});

Deno.test("checkSnapshotSource() locates the snapshot by the volume it was taken of", () => {
  const elsewhere = check({ sourceVolume: { ok: true, value: sourceVolume({ node: "node-b" }) } });
  deepStrictEqual(elsewhere.kind === "checked" && elsewhere.location, {
    kind: "elsewhere",
    volumeName: "pv-origin",
    where: `${TOPOLOGY_KEY}=node-b`,
  });
  const unknown = check({ sourceVolume: { ok: false, reason: "it is pre-provisioned" } });
  deepStrictEqual(unknown.kind === "checked" && unknown.location, {
    kind: "unknown",
    reason: "it is pre-provisioned",
  });
});
