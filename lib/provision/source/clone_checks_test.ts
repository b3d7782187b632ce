import { deepStrictEqual } from "node:assert/strict";
import type { Claim, PersistentVolume } from "../../model/objects.ts";
import { checkCloneSource } from "./clone_checks.ts";
import type { CloneFacts, Read } from "./checks.ts";
import {
  claim,
  SEGMENT,
  SOURCE_HANDLE,
  sourceClaim,
  sourceVolume,
  storageClass,
  TOPOLOGY_KEY,
} from "../../../tests/builders/provision.ts";

const NOT_BOUND = "claim in dataSource not bound or invalid";

/** The source PV without one spec field. */
function volumeWithout(field: keyof PersistentVolume["spec"]): Read<PersistentVolume> {
  const pv = sourceVolume();
  delete pv.spec[field];
  return { ok: true, value: pv };
}

function check(
  facts: { claim?: Read<Claim>; volume?: Read<PersistentVolume> | "none" },
  overrides: { claim?: Claim; requestedBytes?: bigint } = {},
) {
  const cloneFacts: CloneFacts = {
    kind: "clone",
    claim: facts.claim ?? { ok: true, value: sourceClaim() },
    ...(facts.volume === "none"
      ? {}
      : { volume: facts.volume ?? { ok: true, value: sourceVolume() } }),
  };
  return checkCloneSource(cloneFacts, {
    claim: overrides.claim ?? claim(),
    storageClass: storageClass(),
    requestedBytes: overrides.requestedBytes ?? 1n << 30n,
    segment: SEGMENT,
    preventVolumeModeConversion: true,
    sourceName: "origin",
  });
}

const message = (outcome: ReturnType<typeof check>) =>
  outcome.kind === "invalid" ? outcome.message : outcome.kind;

Deno.test("checkCloneSource() sends the source PV's volume handle, and finds it on this node", () => {
  deepStrictEqual(check({}), {
    kind: "checked",
    contentSource: { volume: { volume_id: SOURCE_HANDLE } },
    location: { kind: "here" },
    warnings: [],
  });
});

Deno.test("checkCloneSource() refuses in upstream's order, with its messages", () => {
  const deleting = { deletionTimestamp: "2025-01-01T00:00:00Z" };
  const cases: [string, ReturnType<typeof check>][] = [
    [
      'error getting PVC origin (namespace "apps") from api server: persistentvolumeclaim "origin" not found',
      check({ claim: { ok: false, error: 'persistentvolumeclaim "origin" not found' } }),
    ],
    [
      "the PVC DataSource origin must have a status of Bound.  Got Pending",
      // Pending and being deleted: the phase is checked first.
      check({
        claim: {
          ok: true,
          value: sourceClaim({ metadata: deleting, status: { phase: "Pending" } }),
        },
      }),
    ],
    [
      "the PVC DataSource origin is currently being deleted",
      check({ claim: { ok: true, value: sourceClaim({ metadata: deleting }) } }),
    ],
    [
      "the source PVC (origin) storageclass cannot be empty",
      check({ claim: { ok: true, value: sourceClaim({ spec: { storageClassName: null } }) } }),
    ],
    [
      "the requested PVC (data) storageclass cannot be empty",
      check({}, { claim: claim({ spec: { storageClassName: null } }) }),
    ],
    [
      "error, new PVC request must be greater than or equal in size to the specified PVC data " +
      "source, requested 536870912 but source is 1073741824",
      check({}, { requestedBytes: 512n << 20n }),
    ],
    [
      "volume name is empty in source PVC origin",
      check({
        claim: { ok: true, value: sourceClaim({ spec: { volumeName: "" } }) },
        volume: "none",
      }),
    ],
    [
      `${NOT_BOUND} (persistentvolumes "pv-origin" not found)`,
      check({ volume: { ok: false, error: 'persistentvolumes "pv-origin" not found' } }),
    ],
    [
      `${NOT_BOUND} (PersistentVolume "pv-origin": it is not a CSI volume)`,
      check({ volume: volumeWithout("csi") }),
    ],
    [
      `${NOT_BOUND} (PersistentVolume "pv-origin": its driver "other.csi" is not the ` +
      `StorageClass's provisioner "hostpath.csi.k8s.io")`,
      check({
        volume: {
          ok: true,
          value: sourceVolume({ spec: { csi: { driver: "other.csi", volumeHandle: "h" } } }),
        },
      }),
    ],
    [
      `${NOT_BOUND} (PersistentVolume "pv-origin": it is not bound)`,
      check({ volume: volumeWithout("claimRef") }),
    ],
    [
      `${NOT_BOUND} (PersistentVolume "pv-origin": it is bound to another claim (apps/other))`,
      check({
        volume: {
          ok: true,
          value: sourceVolume({
            spec: { claimRef: { namespace: "apps", name: "other", uid: "x" } },
          }),
        },
      }),
    ],
    [
      `${NOT_BOUND} (PersistentVolume "pv-origin": its status is "Released", not "Bound")`,
      check({ volume: { ok: true, value: sourceVolume({ phase: "Released" }) } }),
    ],
    [
      "the source PVC and destination PVCs must have the same volume mode for cloning.  Source is " +
      "Block, but new PVC requested Filesystem",
      check({ volume: { ok: true, value: sourceVolume({ spec: { volumeMode: "Block" } }) } }),
    ],
    [
      "the source PVC and destination PVCs must have the same volume mode for cloning.  Source is " +
      "Filesystem, but new PVC requested Block",
      check({}, { claim: claim({ spec: { volumeMode: "Block" } }) }),
    ],
  ];
  for (const [expected, outcome] of cases) deepStrictEqual(message(outcome), expected);
});

Deno.test("checkCloneSource() lets a source being deleted through while it carries the cloning protection", () => {
  const protectedSource = sourceClaim({
    metadata: {
      deletionTimestamp: "2025-01-01T00:00:00Z",
      finalizers: ["provisioner.storage.kubernetes.io/cloning-protection"],
    },
  });
  deepStrictEqual(message(check({ claim: { ok: true, value: protectedSource } })), "checked");
});

Deno.test("checkCloneSource() allows a bigger clone and no volume mode on either side", () => {
  deepStrictEqual(message(check({}, { requestedBytes: 2n << 30n })), "checked");
  const filesystem = claim();
  delete filesystem.spec.volumeMode;
  const unset = check({ volume: volumeWithout("volumeMode") }, { claim: filesystem });
  deepStrictEqual(message(unset), "checked");
});

Deno.test("checkCloneSource() locates a source on another node by its PV's affinity", () => {
  const elsewhere = check({ volume: { ok: true, value: sourceVolume({ node: "node-b" }) } });
  deepStrictEqual(elsewhere.kind === "checked" && elsewhere.location, {
    kind: "elsewhere",
    volumeName: "pv-origin",
    where: `${TOPOLOGY_KEY}=node-b`,
  });
});
