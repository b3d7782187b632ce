import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { PersistentVolume } from "../model/objects.ts";
import {
  confirmDelete,
  decideDelete,
  deletionSecret,
  finalizerChange,
  mayNeedDeleteWork,
  noAffinityMessage,
} from "./decide.ts";
import { PV_PROTECTION_FINALIZER as FINALIZER } from "../model/keys.ts";
import { DRIVER, storageClass, TOPOLOGY_KEY as KEY } from "../../tests/builders/provision.ts";

const segment = { [KEY]: "node-a" };

function pv(overrides: {
  phase?: string;
  policy?: string;
  node?: string | null;
  finalizers?: string[];
  deleting?: boolean;
  annotations?: Record<string, string>;
  claimRef?: { name: string; namespace: string };
} = {}): PersistentVolume {
  const node = overrides.node === undefined ? "node-a" : overrides.node;
  return {
    metadata: {
      name: "pvc-1",
      annotations: overrides.annotations ?? {
        "pv.kubernetes.io/provisioned-by": DRIVER,
        "volume.kubernetes.io/provisioner-deletion-secret-name": "",
        "volume.kubernetes.io/provisioner-deletion-secret-namespace": "",
      },
      finalizers: overrides.finalizers ?? [FINALIZER],
      ...(overrides.deleting ? { deletionTimestamp: "2026-11-21T00:00:00Z" } : {}),
    },
    spec: {
      csi: { driver: DRIVER, volumeHandle: "vol-1" },
      persistentVolumeReclaimPolicy: overrides.policy ?? "Delete",
      storageClassName: "fast",
      ...(overrides.claimRef ? { claimRef: overrides.claimRef } : {}),
      ...(node === null ? {} : {
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [{
              matchExpressions: [{ key: KEY, operator: "In", values: [node] }],
            }],
          },
        },
      }),
    },
    status: { phase: overrides.phase ?? "Released" },
  };
}

Deno.test("finalizerChange() adds the finalizer to bound Delete PVs and removes it from Retain and Recycle", () => {
  const cases: [Parameters<typeof pv>[0], string][] = [
    [{ phase: "Bound", finalizers: [] }, "add"],
    [{ phase: "Bound" }, "none"],
    [{ phase: "Bound", finalizers: [], deleting: true }, "none"],
    [{ phase: "Released", finalizers: [] }, "none"],
    [{ policy: "Retain" }, "remove"],
    [{ policy: "Recycle" }, "remove"],
    [{ policy: "Retain", finalizers: [] }, "none"],
  ];
  for (const [overrides, expected] of cases) {
    strictEqual(finalizerChange(pv(overrides)), expected, JSON.stringify(overrides));
  }
});

Deno.test("mayNeedDeleteWork() says no exactly where sync would change no finalizer and delete nothing", () => {
  const cases: [Parameters<typeof pv>[0], boolean][] = [
    [{ phase: "Pending" }, false],
    [{ phase: "Available" }, false],
    [{ phase: "Bound" }, false],
    [{ phase: "Bound", deleting: true }, false],
    [{ phase: "Released", finalizers: [], deleting: true }, false],
    [{ phase: "Released", policy: "Retain", finalizers: [] }, false],
    [{ phase: "Bound", finalizers: [] }, true],
    [{ phase: "Bound", policy: "Retain" }, true],
    [{ phase: "Released" }, true],
    [{ phase: "Released", deleting: true }, true],
    [{ phase: "Released", node: "node-b" }, true],
    [{ phase: "Released", node: null }, true],
  ];
  for (const [overrides, expected] of cases) {
    const volume = pv(overrides);
    const label = JSON.stringify(overrides);
    strictEqual(mayNeedDeleteWork(volume), expected, label);
    if (!expected) {
      strictEqual(finalizerChange(volume), "none", label);
      strictEqual(decideDelete(volume, { segment, storageClass: undefined }).kind, "ignore", label);
    }
  }
});

Deno.test("decideDelete() deletes a Released Delete PV of this node with its volume handle", () => {
  deepStrictEqual(decideDelete(pv(), { segment, storageClass: undefined }), {
    kind: "delete",
    volumeId: "vol-1",
    secret: { kind: "none" },
    storageClassName: "fast",
  });
});

Deno.test("decideDelete() leaves alone what is not Released, not Delete, or already handled", () => {
  const reasons = [
    pv({ phase: "Bound" }),
    pv({ policy: "Retain" }),
    pv({ deleting: true, finalizers: [] }),
  ].map((candidate) => decideDelete(candidate, { segment, storageClass: undefined }));
  deepStrictEqual(reasons, [
    { kind: "ignore", reason: "PV phase is Bound, not Released" },
    { kind: "ignore", reason: "reclaim policy is Retain, not Delete" },
    { kind: "ignore", reason: "PV is being deleted without our finalizer: already handled" },
  ]);
  strictEqual(
    decideDelete(pv({ deleting: true }), { segment, storageClass: undefined }).kind,
    "delete",
  );
});

Deno.test("decideDelete() ignores another node's PV and refuses a PV without node affinity", () => {
  deepStrictEqual(decideDelete(pv({ node: "node-b" }), { segment, storageClass: undefined }), {
    kind: "ignore",
    reason: "PV was not provisioned on this node",
  });
  deepStrictEqual(decideDelete(pv({ node: null }), { segment, storageClass: undefined }), {
    kind: "refuse",
    message: noAffinityMessage("pvc-1"),
  });
});

Deno.test("deletionSecret() reads the annotated secret, or the class's for PVs without annotations", () => {
  deepStrictEqual(
    deletionSecret(
      pv({
        annotations: {
          "volume.kubernetes.io/provisioner-deletion-secret-name": "creds",
          "volume.kubernetes.io/provisioner-deletion-secret-namespace": "apps",
        },
      }),
      undefined,
    ),
    { kind: "read", secret: { name: "creds", namespace: "apps" } },
  );
  const templated = storageClass({
    parameters: {
      "csi.storage.k8s.io/provisioner-secret-name": "${pvc.name}-creds",
      "csi.storage.k8s.io/provisioner-secret-namespace": "${pvc.namespace}",
    },
  });
  deepStrictEqual(
    deletionSecret(
      pv({ annotations: {}, claimRef: { name: "data", namespace: "apps" } }),
      templated,
    ),
    { kind: "read", secret: { name: "data-creds", namespace: "apps" } },
  );
  deepStrictEqual(
    deletionSecret(pv({ annotations: {} }), templated),
    { kind: "none" },
    "no claimRef: no secret",
  );
  deepStrictEqual(
    deletionSecret(pv({ annotations: {}, claimRef: { name: "d", namespace: "a" } }), undefined),
    {
      kind: "none",
    },
  );
});

Deno.test("confirmDelete() goes only when the API server's PV gives the same deletion", () => {
  const decided = { volumeId: "vol-1", secret: { kind: "none" as const } };
  const context = { segment, storageClass: undefined };
  const confirm = (fresh: PersistentVolume | undefined) => confirmDelete(decided, fresh, context);
  deepStrictEqual(confirm(pv()), { kind: "go" });
  deepStrictEqual(confirm(undefined), { kind: "skip", reason: "PV is gone" });
  deepStrictEqual(confirm(pv({ policy: "Retain" })), {
    kind: "skip",
    reason: "reclaim policy is Retain, not Delete",
  });
  deepStrictEqual(confirm(pv({ phase: "Bound" })).kind, "skip");
  deepStrictEqual(confirm(pv({ node: "node-b" })).kind, "skip");
  deepStrictEqual(confirm(pv({ node: null })).kind, "skip");
  const moved = pv();
  moved.spec.csi = { driver: DRIVER, volumeHandle: "vol-2" };
  deepStrictEqual(confirm(moved), { kind: "changed", reason: "volume handle is now vol-2" });
  const secret = pv({
    annotations: {
      "volume.kubernetes.io/provisioner-deletion-secret-name": "creds",
      "volume.kubernetes.io/provisioner-deletion-secret-namespace": "apps",
    },
  });
  deepStrictEqual(confirm(secret), { kind: "changed", reason: "deletion secret changed" });
});
