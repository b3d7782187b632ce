import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import type { Claim } from "../model/objects.ts";
import { KubeApi } from "./api.ts";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
import { KubeApiError } from "./rest/client.ts";

const claim: Claim = {
  metadata: { name: "data", namespace: "apps", uid: "u1", resourceVersion: "42" },
  spec: {},
};

Deno.test("selectNode merge-patches selected-node with the claim's resourceVersion as precondition", async () => {
  const rest = recordingRest([{}]);
  strictEqual(await new KubeApi(rest).selectNode(claim, "node-a"), "selected");
  deepStrictEqual(rest.requests, [{
    method: "PATCH",
    path: "/api/v1/namespaces/apps/persistentvolumeclaims/data",
    contentType: "application/merge-patch+json",
    body: {
      metadata: {
        resourceVersion: "42",
        annotations: { "volume.kubernetes.io/selected-node": "node-a" },
      },
    },
  }]);
});

Deno.test("selectNode: 409 is a lost race, 404 a deleted claim, anything else is thrown", async () => {
  const conflict = new KubeApiError(409, "Conflict", "the object has been modified");
  const gone = new KubeApiError(404, "NotFound", "not found");
  const api = new KubeApi(recordingRest([conflict, gone, new KubeApiError(500, "x", "boom")]));
  strictEqual(await api.selectNode(claim, "node-a"), "conflict");
  strictEqual(await api.selectNode(claim, "node-a"), "gone");
  await rejects(api.selectNode(claim, "node-a"), /boom/);
});

Deno.test("removeSelectedNode sends null for the annotation, with the same precondition", async () => {
  const rest = recordingRest([{}]);
  strictEqual(await new KubeApi(rest).removeSelectedNode(claim), "removed");
  deepStrictEqual(rest.requests[0]?.body, {
    metadata: {
      resourceVersion: "42",
      annotations: { "volume.kubernetes.io/selected-node": null },
    },
  });
});

Deno.test("findSecretData: the data decoded, undefined for a 404 (Secret or namespace gone), other errors thrown", async () => {
  const gone = new KubeApiError(404, "NotFound", 'secrets "creds" not found');
  const forbidden = new KubeApiError(403, "Forbidden", "secrets is forbidden");
  const api = new KubeApi(recordingRest([{ data: { token: btoa("t1") } }, gone, forbidden]));
  const ref = { namespace: "vault", name: "creds" };
  deepStrictEqual(await api.findSecretData(ref), { token: "t1" });
  strictEqual(await api.findSecretData(ref), undefined);
  await rejects(api.findSecretData(ref), /forbidden/);
});
