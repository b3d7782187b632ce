import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import type { Claim } from "../model/objects.ts";
import { ANN_SELECTED_NODE, CLONE_PROTECTION_FINALIZER as CLONE } from "../model/keys.ts";
import { KubeApi } from "./api.ts";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
import { capturing } from "../../tests/fakes/logger.ts";
import { KubeApiError } from "./rest/client.ts";

// Upstream's rbac.yaml grants update, not patch, on persistentvolumeclaims.
const PATH = "/api/v1/namespaces/apps/persistentvolumeclaims/data";
const noPatch = () =>
  new KubeApiError(403, "Forbidden", 'cannot patch resource "persistentvolumeclaims"');
const conflict = () => new KubeApiError(409, "Conflict", "the object has been modified");

const cached: Claim = {
  metadata: { name: "data", namespace: "apps", uid: "u1", resourceVersion: "42" },
  spec: {},
};

/** The claim as the API server sends it: every field, which a PUT must carry back. */
function served(resourceVersion: string, extra: Record<string, unknown> = {}) {
  const annotations: Record<string, string> = {
    "volume.kubernetes.io/storage-provisioner": "hostpath.csi.k8s.io",
  };
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name: "data",
      namespace: "apps",
      uid: "u1",
      resourceVersion,
      labels: { app: "db" },
      annotations,
      ...extra,
    },
    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    status: { phase: "Pending" },
  };
}

const methods = (rest: { requests: { method: string }[] }) => rest.requests.map((r) => r.method);

Deno.test("selectNode: patch forbidden, an update of the claim read under the cached resourceVersion", async () => {
  const rest = recordingRest([noPatch(), served("42"), {}]);
  strictEqual(await new KubeApi(rest).selectNode(cached, "node-a"), "selected");
  deepStrictEqual(methods(rest), ["PATCH", "GET", "PUT"]);
  const put = rest.requests[2]!;
  strictEqual(put.path, PATH);
  const expected = served("42");
  expected.metadata.annotations = {
    ...expected.metadata.annotations,
    [ANN_SELECTED_NODE]: "node-a",
  };
  deepStrictEqual(put.body, expected);
});

Deno.test("selectNode: once patch was forbidden, later writes read and update without a patch", async () => {
  const { logger, lines } = capturing(2);
  const rest = recordingRest([noPatch(), served("42"), {}, served("42"), {}, served("42"), {}]);
  const api = new KubeApi(rest, { logger });
  strictEqual(await api.selectNode(cached, "node-a"), "selected");
  strictEqual(await api.removeSelectedNode(cached), "removed");
  deepStrictEqual(
    await api.changeClaimFinalizer(cached.metadata, { finalizer: CLONE, action: "add" }),
    "patched",
  );
  deepStrictEqual(methods(rest), ["PATCH", "GET", "PUT", "GET", "PUT", "GET", "PUT"]);
  const told = lines.filter((line) => line.includes("would save that read"));
  strictEqual(told.length, 1, lines.join("\n"));
  const removed = rest.requests[4]!.body as ReturnType<typeof served>;
  strictEqual(ANN_SELECTED_NODE in removed.metadata.annotations, false);
});

Deno.test("selectNode: a 409 on the update is a lost race, as the patch's", async () => {
  const rest = recordingRest([noPatch(), served("43"), conflict()]);
  strictEqual(await new KubeApi(rest).selectNode(cached, "node-a"), "conflict");
  const put = rest.requests[2]!.body as ReturnType<typeof served>;
  strictEqual(put.metadata.resourceVersion, "42");
});

Deno.test("removeSelectedNode: a 409 on the update is a conflict, a 404 on the read is gone", async () => {
  const gone = new KubeApiError(404, "NotFound", "not found");
  const api = new KubeApi(recordingRest([noPatch(), served("43"), conflict(), gone]));
  strictEqual(await api.removeSelectedNode(cached), "conflict");
  strictEqual(await api.removeSelectedNode(cached), "gone");
});

Deno.test("selectNode: an update that RBAC forbids too is thrown", async () => {
  const noUpdate = new KubeApiError(403, "Forbidden", 'cannot update resource "x"');
  const api = new KubeApi(recordingRest([noPatch(), served("42"), noUpdate]));
  await rejects(api.selectNode(cached, "node-a"), /cannot update/);
});

Deno.test("changeClaimFinalizer: patch forbidden, the claim read gets the finalizer, read again after a conflict", async () => {
  const rest = recordingRest([noPatch(), served("7"), conflict(), served("8"), {}]);
  const ref = { namespace: "apps", name: "data" };
  deepStrictEqual(
    await new KubeApi(rest).changeClaimFinalizer(ref, { finalizer: CLONE, action: "add" }),
    "patched",
  );
  deepStrictEqual(methods(rest), ["PATCH", "GET", "PUT", "GET", "PUT"]);
  deepStrictEqual(rest.requests[4]!.body, served("8", { finalizers: [CLONE] }));
});

Deno.test("changeClaimFinalizer: update writes nothing when the claim is so already; removes by value", async () => {
  const rest = recordingRest([
    noPatch(),
    served("7", { finalizers: [CLONE] }),
    served("7", { finalizers: ["a", CLONE] }),
    {},
  ]);
  const api = new KubeApi(rest);
  const ref = { namespace: "apps", name: "data" };
  for (const action of ["add", "remove"] as const) {
    strictEqual(await api.changeClaimFinalizer(ref, { finalizer: CLONE, action }), "patched");
  }
  deepStrictEqual(methods(rest), ["PATCH", "GET", "GET", "PUT"]);
  deepStrictEqual(rest.requests[3]!.body, served("7", { finalizers: ["a"] }));
});
