import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { OwnerReference } from "../model/objects.ts";
import {
  controllerOf,
  controllerReference,
  describeOwner,
  isControlledBy,
  nodeOwnerReference,
  withController,
} from "./owner.ts";

const DAEMON_SET: OwnerReference = {
  apiVersion: "apps/v1",
  kind: "DaemonSet",
  name: "csi-hostpathplugin",
  uid: "ds-uid",
  controller: true,
};

Deno.test("nodeOwnerReference(): a controller reference to the v1 Node, without blockOwnerDeletion", () => {
  deepStrictEqual(nodeOwnerReference({ name: "node-a", uid: "n-1" }), {
    apiVersion: "v1",
    kind: "Node",
    name: "node-a",
    uid: "n-1",
    controller: true,
  });
  deepStrictEqual(
    controllerReference({ apiVersion: "v1", kind: "Pod", name: "p", uid: "u" }).controller,
    true,
  );
});

Deno.test("isControlledBy() needs a controller reference with the owner's UID", () => {
  strictEqual(isControlledBy([DAEMON_SET], DAEMON_SET), true);
  strictEqual(isControlledBy([{ ...DAEMON_SET, controller: false }], DAEMON_SET), false);
  strictEqual(isControlledBy([{ ...DAEMON_SET, uid: "other" }], DAEMON_SET), false);
  strictEqual(isControlledBy(undefined, DAEMON_SET), false);
});

Deno.test("withController() replaces another controller and keeps plain owners", () => {
  const node = nodeOwnerReference({ name: "node-a", uid: "n-1" });
  const plain = { ...DAEMON_SET, uid: "plain", controller: false };
  deepStrictEqual(withController([DAEMON_SET, plain], node), [plain, node]);
  deepStrictEqual(withController(undefined, node), [node]);
  deepStrictEqual(withController([{ ...node, controller: false }], node), [node]);
});

Deno.test("controllerOf() and describeOwner()", () => {
  strictEqual(controllerOf([{ ...DAEMON_SET, controller: false }]), undefined);
  strictEqual(controllerOf([DAEMON_SET])?.uid, "ds-uid");
  strictEqual(describeOwner(DAEMON_SET), "apps/v1/DaemonSet csi-hostpathplugin");
});
