import { strictEqual } from "node:assert/strict";
import type { PersistentVolume } from "../model/objects.ts";
import { isDriversVolume, isThisNodesConcern } from "./volume_owner.ts";

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

Deno.test("isThisNodesConcern() keeps this node's PVs and PVs without affinity, and drops other nodes'", () => {
  strictEqual(isThisNodesConcern(pv({ driver: "test.csi.k8s.io", node: "node-a" }), options), true);
  strictEqual(
    isThisNodesConcern(pv({ driver: "test.csi.k8s.io", node: "node-b" }), options),
    false,
  );
  strictEqual(isThisNodesConcern(pv({ driver: "test.csi.k8s.io", node: null }), options), true);
  strictEqual(isThisNodesConcern(pv({ driver: "other", node: "node-a" }), options), false);
});
