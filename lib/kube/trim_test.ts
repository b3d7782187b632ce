/**
 * What the informer caches keep of a claim and of a PV as kube-apiserver
 * sends them (parsed watch events, managedFields already cut out).
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { RawObject } from "./informer/types.ts";
import { trimClaim, trimPersistentVolume } from "./trim.ts";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** Declared, then returned: a RawObject's metadata names only what every object has. */
function rawClaim(annotations: Record<string, string>): RawObject {
  const raw = {
    metadata: { name: "data", namespace: "ns", uid: "u1", resourceVersion: "7", annotations },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "1Gi" } },
      storageClassName: "fast",
      volumeMode: "Filesystem",
    },
    status: { phase: "Pending", capacity: {} },
  };
  return raw;
}

Deno.test("trimClaim keeps a claim's annotations but drops kubectl's last-applied copy", () => {
  const claim = trimClaim(
    rawClaim({
      "volume.kubernetes.io/selected-node": "node-a",
      [LAST_APPLIED]: '{"kind":"PersistentVolumeClaim","metadata":{"name":"data"}}',
    }),
    { nodeName: "node-a" },
  );
  deepStrictEqual(claim?.metadata.annotations, {
    "volume.kubernetes.io/selected-node": "node-a",
  });
});

Deno.test("trimClaim keeps every annotation when kubectl's copy is not among them", () => {
  const annotations = {
    "volume.kubernetes.io/selected-node": "node-a",
    "volume.kubernetes.io/storage-provisioner": "hostpath.csi.k8s.io",
  };
  const claim = trimClaim(rawClaim({ ...annotations }), { nodeName: "node-a" });
  deepStrictEqual(claim?.metadata.annotations, annotations);
  deepStrictEqual(claim?.spec.resources, { requests: { storage: "1Gi" } });
  deepStrictEqual(claim?.status, { phase: "Pending" });
});

Deno.test("trimClaim does not keep an unbound claim selected to another node", () => {
  const claim = trimClaim(rawClaim({ "volume.kubernetes.io/selected-node": "node-b" }), {
    nodeName: "node-a",
  });
  strictEqual(claim, undefined);
});

Deno.test("trimPersistentVolume keeps what the filter accepts, without kubectl's copy", () => {
  const pv = {
    metadata: {
      name: "pvc-1",
      resourceVersion: "9",
      annotations: {
        "pv.kubernetes.io/provisioned-by": "hostpath.csi.k8s.io",
        [LAST_APPLIED]: "{}",
      },
    },
    spec: {
      csi: { driver: "hostpath.csi.k8s.io", volumeHandle: "v1" },
      persistentVolumeReclaimPolicy: "Delete",
      mountOptions: ["ro"],
    },
    status: { phase: "Released", message: "claim gone" },
  };
  const raw: RawObject = pv;
  const kept = trimPersistentVolume(raw, { keep: () => true });
  deepStrictEqual(kept?.metadata.annotations, {
    "pv.kubernetes.io/provisioned-by": "hostpath.csi.k8s.io",
  });
  deepStrictEqual(kept?.spec, {
    csi: { driver: "hostpath.csi.k8s.io", volumeHandle: "v1" },
    persistentVolumeReclaimPolicy: "Delete",
    // The expansion request's mount flags.
    mountOptions: ["ro"],
  });
  deepStrictEqual(kept?.status, { phase: "Released" });
  strictEqual(trimPersistentVolume(raw, { keep: () => false }), undefined);
});
