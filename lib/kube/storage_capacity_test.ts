import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
import { KubeApiError } from "./rest/client.ts";
import {
  createStorageCapacity,
  deleteStorageCapacity,
  trimPublishedCapacity,
  trimStorageCapacity,
  updateStorageCapacity,
} from "./storage_capacity.ts";

const conflict = new KubeApiError(409, "Conflict", "the object has been modified");
const notFound = new KubeApiError(404, "NotFound", "not found");
const PATH = "/apis/storage.k8s.io/v1/namespaces/csi/csistoragecapacities";

Deno.test("create POSTs a v1 CSIStorageCapacity with generateName", async () => {
  const rest = recordingRest([{ metadata: { name: "csisc-x1", resourceVersion: "5" } }]);
  const created = await createStorageCapacity(rest, {
    namespace: "csi",
    object: {
      metadata: { generateName: "csisc-", labels: { a: "b" } },
      storageClassName: "fast",
      nodeTopology: { matchLabels: { zone: "z" } },
      capacity: "1Gi",
    },
  });
  deepStrictEqual(created, { name: "csisc-x1", resourceVersion: "5" });
  strictEqual(rest.requests[0]?.method, "POST");
  strictEqual(rest.requests[0]?.path, PATH);
  deepStrictEqual(rest.requests[0]?.body, {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSIStorageCapacity",
    metadata: { generateName: "csisc-", labels: { a: "b" } },
    storageClassName: "fast",
    nodeTopology: { matchLabels: { zone: "z" } },
    capacity: "1Gi",
  });
});

Deno.test("update is a merge patch carrying the resourceVersion; 409 and 404 are values", async () => {
  const rest = recordingRest([{}, conflict, notFound]);
  const target = {
    namespace: "csi",
    name: "csisc-x1",
    resourceVersion: "7",
    change: { capacity: "2Gi", maximumVolumeSize: null },
  };
  strictEqual(await updateStorageCapacity(rest, target), "updated");
  strictEqual(await updateStorageCapacity(rest, target), "conflict");
  strictEqual(await updateStorageCapacity(rest, target), "gone");
  const [first] = rest.requests;
  strictEqual(first?.method, "PATCH");
  strictEqual(first?.path, `${PATH}/csisc-x1`);
  strictEqual(first?.contentType, "application/merge-patch+json");
  deepStrictEqual(first?.body, {
    metadata: { resourceVersion: "7" },
    capacity: "2Gi",
    maximumVolumeSize: null,
  });
});

Deno.test("delete carries a UID precondition; 404 and 409 both mean gone", async () => {
  const rest = recordingRest([{}, notFound, conflict]);
  const target = { namespace: "csi", name: "csisc-x1", uid: "u-1" };
  strictEqual(await deleteStorageCapacity(rest, target), "deleted");
  strictEqual(await deleteStorageCapacity(rest, target), "gone");
  strictEqual(await deleteStorageCapacity(rest, target), "gone");
  deepStrictEqual(rest.requests[0]?.body, {
    apiVersion: "v1",
    kind: "DeleteOptions",
    preconditions: { uid: "u-1" },
  });
});

Deno.test("trimStorageCapacity keeps identity, owners and the published fields only", () => {
  const trimmed = trimStorageCapacity({
    metadata: {
      name: "csisc-x1",
      namespace: "csi",
      uid: "u-1",
      resourceVersion: "9",
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { a: "b" },
      ownerReferences: [{
        apiVersion: "v1",
        kind: "Node",
        name: "n",
        uid: "n-1",
        controller: true,
      }],
      managedFields: [{ manager: "kubectl" }],
      annotations: { big: "x".repeat(1000) },
    } as never,
    storageClassName: "fast",
    nodeTopology: { matchLabels: { zone: "z" } },
    capacity: "1Gi",
  });
  deepStrictEqual(trimmed, {
    metadata: {
      name: "csisc-x1",
      namespace: "csi",
      uid: "u-1",
      resourceVersion: "9",
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { a: "b" },
      ownerReferences: [{
        apiVersion: "v1",
        kind: "Node",
        name: "n",
        uid: "n-1",
        controller: true,
      }],
    },
    storageClassName: "fast",
    nodeTopology: { matchLabels: { zone: "z" } },
    capacity: "1Gi",
  });
});

Deno.test("trimPublishedCapacity keeps who published what for which class, in bytes", () => {
  const raw = {
    metadata: {
      name: "csisc-1",
      namespace: "csi",
      uid: "u1",
      resourceVersion: "9",
      labels: {
        "csi.storage.k8s.io/drivername": "hostpath.csi.k8s.io",
        "csi.storage.k8s.io/managed-by": "external-provisioner-node-c",
      },
      ownerReferences: [
        { apiVersion: "v1", kind: "Node", name: "node-c", uid: "n", controller: true },
      ],
      managedFields: [{ manager: "x" }],
    },
    storageClassName: "local",
    nodeTopology: { matchLabels: { "topology.hostpath.csi/node": "node-c" } },
    capacity: "3Gi",
    maximumVolumeSize: "2Gi",
  };
  deepStrictEqual(trimPublishedCapacity(raw), {
    publisher: "external-provisioner-node-c",
    name: "csisc-1",
    uid: "u1",
    resourceVersion: "9",
    ownerNode: { name: "node-c", uid: "n" },
    storageClassName: "local",
    segment: { "topology.hostpath.csi/node": "node-c" },
    capacityBytes: 3n * 1024n ** 3n,
    maximumVolumeSizeBytes: 2n * 1024n ** 3n,
  });
  const { maximumVolumeSize: _max, ...noMax } = raw;
  strictEqual(trimPublishedCapacity({ ...noMax, capacity: "lots" })?.capacityBytes, undefined);
  strictEqual("maximumVolumeSizeBytes" in trimPublishedCapacity(noMax)!, false);
  const unlabelled = { ...raw, metadata: { ...raw.metadata, labels: {} } };
  strictEqual(trimPublishedCapacity(unlabelled), undefined, "no agent's object");
  const going = {
    ...raw,
    metadata: { ...raw.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
  };
  strictEqual(trimPublishedCapacity(going), undefined, "being deleted");
});
