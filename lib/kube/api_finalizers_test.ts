import { deepStrictEqual } from "node:assert/strict";
import { KubeApi } from "./api.ts";
import { KubeApiError } from "./rest/client.ts";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
import { CLONE_PROTECTION_FINALIZER as CLONE } from "../model/keys.ts";

const notFound = new KubeApiError(404, "NotFound", "gone");

Deno.test("changeClaimFinalizer() merges one finalizer in or out by value, without a read", async () => {
  const rest = recordingRest([{}, {}, notFound]);
  const api = new KubeApi(rest);
  const ref = { namespace: "apps", name: "origin" };
  deepStrictEqual(
    await api.changeClaimFinalizer(ref, { finalizer: CLONE, action: "add" }),
    "patched",
  );
  deepStrictEqual(
    await api.changeClaimFinalizer(ref, { finalizer: CLONE, action: "remove" }),
    "patched",
  );
  deepStrictEqual(await api.changeClaimFinalizer(ref, { finalizer: CLONE, action: "add" }), "gone");
  const path = "/api/v1/namespaces/apps/persistentvolumeclaims/origin";
  deepStrictEqual(
    rest.requests.map((r) => [r.method, r.path, r.contentType, r.body]),
    [
      ["PATCH", path, "application/strategic-merge-patch+json", {
        metadata: { finalizers: [CLONE] },
      }],
      ["PATCH", path, "application/strategic-merge-patch+json", {
        metadata: { "$deleteFromPrimitiveList/finalizers": [CLONE] },
      }],
      ["PATCH", path, "application/strategic-merge-patch+json", {
        metadata: { finalizers: [CLONE] },
      }],
    ],
  );
});

Deno.test("patchFinalizer() patches the PV protection finalizer the same way", async () => {
  const rest = recordingRest([{}, notFound]);
  const api = new KubeApi(rest);
  deepStrictEqual(await api.patchFinalizer("pv-1", "remove"), "patched");
  deepStrictEqual(await api.patchFinalizer("pv-1", "add"), "gone");
  deepStrictEqual(rest.requests.map((r) => [r.path, r.body]), [
    ["/api/v1/persistentvolumes/pv-1", {
      metadata: {
        "$deleteFromPrimitiveList/finalizers": [
          "external-provisioner.volume.kubernetes.io/finalizer",
        ],
      },
    }],
    ["/api/v1/persistentvolumes/pv-1", {
      metadata: { finalizers: ["external-provisioner.volume.kubernetes.io/finalizer"] },
    }],
  ]);
});
