import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { parseConfig } from "../config/config.ts";
import type { Config } from "../config/types.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import { DRIVER, TOPOLOGY_KEY } from "../../tests/builders/provision.ts";
import {
  capacityDriverProblem,
  capacityLabelsProblem,
  capacityOptions,
  ownerChoice,
} from "./options.ts";

const driver: DriverInfo = {
  name: DRIVER,
  vendorVersion: "1",
  pluginCapabilities: new Set(["CONTROLLER_SERVICE", "VOLUME_ACCESSIBILITY_CONSTRAINTS"]),
  controllerCapabilities: new Set(["CREATE_DELETE_VOLUME", "GET_CAPACITY"]),
  nodeId: "node-a",
  segment: { zone: "z1", [TOPOLOGY_KEY]: "node-a" },
};

function config(args: string[], env: Record<string, string> = {}): Config {
  const outcome = parseConfig(["--node-deployment", "--enable-capacity", ...args], {
    NODE_NAME: "node-a",
    NAMESPACE: "csi",
    POD_NAME: "agent-x1",
    ...env,
  });
  if (outcome.kind !== "run") throw new Error(JSON.stringify(outcome));
  return outcome.config;
}

Deno.test("capacityOptions() maps the capacity flags and the driver's segment", () => {
  const options = capacityOptions(
    config([
      "--capacity-for-immediate-binding",
      "--capacity-threads=3",
      "--capacity-poll-interval=15s",
      "--kube-api-capacity-qps=2.5",
      "--kube-api-capacity-burst=7",
      "--retry-interval-start=2s",
      "--retry-interval-max=1m",
    ]),
    driver,
  );
  deepStrictEqual(options, {
    desired: { driverName: DRIVER, immediateBinding: true },
    nodeName: "node-a",
    namespace: "csi",
    segment: { [TOPOLOGY_KEY]: "node-a", zone: "z1" },
    labels: {
      "csi.storage.k8s.io/drivername": DRIVER,
      "csi.storage.k8s.io/managed-by": "external-provisioner-node-a",
    },
    labelSelector: `csi.storage.k8s.io/drivername=${DRIVER},` +
      "csi.storage.k8s.io/managed-by=external-provisioner-node-a",
    owner: { kind: "pod", namespace: "csi", podName: "agent-x1", level: 1 },
    workers: 3,
    pollIntervalMs: 15_000,
    retry: { startMs: 2000, maxMs: 60_000 },
    client: { qps: 2.5, burst: 7 },
  });
  deepStrictEqual(Object.keys(options.segment), [TOPOLOGY_KEY, "zone"]);
});

Deno.test("ownerChoice(): the Node owner wins over the level; -1 is none", () => {
  deepStrictEqual(ownerChoice(config(["--capacity-owner-node", "--capacity-ownerref-level=0"])), {
    kind: "node",
    nodeName: "node-a",
  });
  deepStrictEqual(ownerChoice(config(["--capacity-ownerref-level=-1"])), { kind: "none" });
  deepStrictEqual(ownerChoice(config(["--capacity-ownerref-level=2"])), {
    kind: "pod",
    namespace: "csi",
    podName: "agent-x1",
    level: 2,
  });
});

Deno.test("capacityDriverProblem() refuses a driver without GET_CAPACITY, clearly", () => {
  strictEqual(capacityDriverProblem(driver), undefined);
  const problem = capacityDriverProblem({
    ...driver,
    controllerCapabilities: new Set(["CREATE_DELETE_VOLUME"]),
  });
  ok(
    problem?.startsWith(`--enable-capacity is set but CSI driver ${DRIVER} does not report`),
  );
  ok(problem?.includes("GET_CAPACITY"));
});

Deno.test("capacityLabelsProblem(): a topology value that is no label value is a start-up error, never a 422 loop", () => {
  strictEqual(capacityLabelsProblem(config([]), driver), undefined);
  const longNode = `node-${"x".repeat(70)}`; // a valid node name, too long for a label value
  const unfit = capacityLabelsProblem(config([], { NODE_NAME: longNode }), {
    ...driver,
    segment: { [TOPOLOGY_KEY]: longNode, "bad key!": "z1" },
  });
  ok(unfit?.startsWith("--enable-capacity is set but this node's CSIStorageCapacity objects"));
  ok(unfit?.includes("is 75 characters long, a label value is at most 63"), String(unfit));
  ok(unfit?.includes(`topology key "bad key!" has a name that is not a label name`), String(unfit));
  // The managed-by label of a long node name is hashed as upstream does: no problem there.
  ok(!unfit?.includes("csi.storage.k8s.io/managed-by"), String(unfit));
});
