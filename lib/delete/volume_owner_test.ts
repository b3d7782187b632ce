import { strictEqual } from "node:assert/strict";
import type { PersistentVolume } from "../model/objects.ts";
import { isDriversVolume, thisNodesConcern } from "./volume_owner.ts";

const KEY = "topology.test.csi.k8s.io/node";
const options = { driverName: "test.csi.k8s.io", segment: { [KEY]: "node-a" } };

function pv(
  options: { annotations?: Record<string, string>; driver?: string; node?: string | null },
): PersistentVolume {
  return {
    metadata: {
      name: "pvc-1",
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec: {
      ...(options.driver ? { csi: { driver: options.driver, volumeHandle: "v" } } : {}),
      ...(options.node === null || options.node === undefined ? {} : {
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [{
              matchExpressions: [{ key: KEY, operator: "In", values: [options.node] }],
            }],
          },
        },
      }),
    },
  };
}

Deno.test("isDriversVolume() follows provisioned-by, then migrated-to, then spec.csi.driver", () => {
  strictEqual(
    isDriversVolume(
      pv({ annotations: { "pv.kubernetes.io/provisioned-by": "test.csi.k8s.io" } }),
      "test.csi.k8s.io",
    ),
    true,
  );
  strictEqual(
    isDriversVolume(
      pv({
        annotations: { "pv.kubernetes.io/provisioned-by": "other" },
        driver: "test.csi.k8s.io",
      }),
      "test.csi.k8s.io",
    ),
    false,
    "the annotation wins over spec.csi.driver",
  );
  strictEqual(
    isDriversVolume(
      pv({
        annotations: {
          "pv.kubernetes.io/provisioned-by": "kubernetes.io/x",
          "pv.kubernetes.io/migrated-to": "test.csi.k8s.io",
        },
      }),
      "test.csi.k8s.io",
    ),
    true,
  );
  strictEqual(
    isDriversVolume(pv({ driver: "test.csi.k8s.io" }), "test.csi.k8s.io"),
    true,
    "static CSI PVs count",
  );
  strictEqual(isDriversVolume(pv({}), "test.csi.k8s.io"), false);
});

Deno.test("thisNodesConcern() keeps this node's PVs and PVs without affinity, and drops other nodes'", () => {
  const keep = thisNodesConcern(options);
  strictEqual(keep(pv({ driver: "test.csi.k8s.io", node: "node-a" })), true);
  strictEqual(keep(pv({ driver: "test.csi.k8s.io", node: "node-b" })), false);
  strictEqual(keep(pv({ driver: "test.csi.k8s.io", node: null })), true);
  strictEqual(keep(pv({ driver: "other", node: "node-a" })), false);
});
