import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { resizerLeaseName, trimResizeClaim } from "./resize.ts";

const raw = {
  metadata: { name: "data", namespace: "apps", uid: "u1", resourceVersion: "5" },
  spec: { volumeName: "pv-1", resources: { requests: { storage: "2Gi" } } },
  status: {
    phase: "Bound",
    capacity: { storage: "1Gi" },
    allocatedResources: { storage: "2Gi" },
    allocatedResourceStatuses: { storage: "ControllerResizeInProgress" },
    conditions: [{ type: "Resizing", status: "True" }],
    currentVolumeAttributesClassName: "gold",
  },
};

Deno.test("trimResizeClaim(): a claim bound to this node's PV keeps the status expansion reads", () => {
  const claim = trimResizeClaim(raw, (name) => name === "pv-1");
  deepStrictEqual(claim?.status, {
    phase: "Bound",
    capacity: { storage: "1Gi" },
    conditions: [{ type: "Resizing", status: "True" }],
    allocatedResources: { storage: "2Gi" },
    allocatedResourceStatuses: { storage: "ControllerResizeInProgress" },
  });
  strictEqual(trimResizeClaim(raw, () => false), undefined);
  strictEqual(trimResizeClaim({ ...raw, spec: {} }, () => true), undefined);
});

Deno.test("resizerLeaseName(): external-resizer's leader-election name for the driver", () => {
  strictEqual(resizerLeaseName("hostpath.csi.k8s.io"), "external-resizer-hostpath-csi-k8s-io");
  strictEqual(resizerLeaseName("odd_"), "external-resizer-odd-X");
});
