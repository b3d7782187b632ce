import { strictEqual } from "node:assert/strict";
import type { PersistentVolume } from "../model/objects.ts";
import { isDriversVolume, thisNodesConcern } from "./volume_owner.ts";
import { DRIVER, TOPOLOGY_KEY as KEY } from "../../tests/builders/provision.ts";

const options = { driverName: DRIVER, segment: { [KEY]: "node-a" } };

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
      pv({ annotations: { "pv.kubernetes.io/provisioned-by": DRIVER } }),
      DRIVER,
    ),
    true,
  );
  strictEqual(
    isDriversVolume(
      pv({
        annotations: { "pv.kubernetes.io/provisioned-by": "other" },
        driver: DRIVER,
      }),
      DRIVER,
    ),
    false,
    "the annotation wins over spec.csi.driver",
  );
  strictEqual(
    isDriversVolume(
      pv({
        annotations: {
          "pv.kubernetes.io/provisioned-by": "kubernetes.io/x",
          "pv.kubernetes.io/migrated-to": DRIVER,
        },
      }),
      DRIVER,
    ),
    true,
  );
  strictEqual(
    isDriversVolume(pv({ driver: DRIVER }), DRIVER),
    true,
    "static CSI PVs count",
  );
  strictEqual(isDriversVolume(pv({}), DRIVER), false);
});

Deno.test("thisNodesConcern() keeps this node's PVs and PVs without affinity, and drops other nodes'", () => {
  const keep = thisNodesConcern(options);
  strictEqual(keep(pv({ driver: DRIVER, node: "node-a" })), true);
  strictEqual(keep(pv({ driver: DRIVER, node: "node-b" })), false);
  strictEqual(keep(pv({ driver: DRIVER, node: null })), true);
  strictEqual(keep(pv({ driver: "other", node: "node-a" })), false);
});
