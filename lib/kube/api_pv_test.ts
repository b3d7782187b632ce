/** KubeApi's PV calls with a scripted REST client: which answers are values and which are thrown. */
import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import type { PersistentVolume } from "../model/objects.ts";
import { KubeApi } from "./api.ts";
import type { KubeRequest } from "./rest/client.ts";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
import { apiError } from "./rest/types.ts";

/** "METHOD path" of each request the client sent. */
const seen = (rest: { requests: KubeRequest[] }) =>
  rest.requests.map((request) => `${request.method} ${request.path}`);

const PV: PersistentVolume = {
  metadata: { name: "pvc-1" },
  spec: { csi: { driver: "d", volumeHandle: "ours" } },
};
const POST = "POST /api/v1/persistentvolumes";
const GET = "GET /api/v1/persistentvolumes/pvc-1";

const status = (code: number, reason: string, causes: unknown[] = []) =>
  JSON.stringify({ kind: "Status", code, reason, message: `${reason}!`, details: { causes } });

Deno.test("createPersistentVolume(): a 422 is a refusal naming the fields", async () => {
  const rest = recordingRest([
    apiError(
      422,
      status(422, "Invalid", [
        { field: "metadata.labels", message: "bad" },
        { field: "metadata.labels", message: "worse" },
        { message: "no field" },
      ]),
    ),
  ]);
  deepStrictEqual(await new KubeApi(rest).createPersistentVolume(PV), {
    kind: "rejected",
    status: 422,
    reason: "Invalid",
    message: "Invalid!",
    fields: ["metadata.labels"],
  });
  deepStrictEqual(seen(rest), [POST]);
});

Deno.test("createPersistentVolume(): a 409 reads the PV that exists", async () => {
  const theirs = { metadata: { name: "pvc-1" }, spec: { csi: { driver: "d", volumeHandle: "x" } } };
  const rest = recordingRest([apiError(409, status(409, "AlreadyExists")), theirs]);
  const outcome = await new KubeApi(rest).createPersistentVolume(PV);
  strictEqual(outcome.kind, "exists");
  strictEqual(outcome.kind === "exists" && outcome.existing?.spec.csi?.volumeHandle, "x");
  deepStrictEqual(seen(rest), [POST, GET]);
});

Deno.test("createPersistentVolume(): 403, 429 and 5xx are thrown for a retry", async () => {
  for (const code of [401, 403, 408, 429, 500, 503]) {
    const rest = recordingRest([apiError(code, status(code, "Nope"))]);
    await rejects(new KubeApi(rest).createPersistentVolume(PV), /Nope!/, String(code));
    deepStrictEqual(seen(rest), [POST], String(code));
  }
});

Deno.test("readPersistentVolume(): undefined when it does not exist", async () => {
  const rest = recordingRest([apiError(404, status(404, "NotFound"))]);
  strictEqual(await new KubeApi(rest).readPersistentVolume("pvc-1"), undefined);
  deepStrictEqual(seen(rest), [GET]);
});

Deno.test("deletePersistentVolume and deleteClaim: the UID a precondition; its 409 is gone, 403 on a claim forbidden", async () => {
  const conflict = apiError(409, JSON.stringify({ reason: "Conflict", message: "uid" }));
  const forbidden = apiError(403, JSON.stringify({ reason: "Forbidden", message: "no" }));
  const rest = recordingRest([{}, conflict, forbidden]);
  const api = new KubeApi(rest);
  strictEqual(await api.deletePersistentVolume("pv-1", undefined, "u1"), "deleted");
  deepStrictEqual(rest.requests[0]!.body, { preconditions: { uid: "u1" } });
  strictEqual(await api.deleteClaim({ namespace: "ns", name: "c", uid: "u2" }), "gone");
  deepStrictEqual(await api.deleteClaim({ namespace: "ns", name: "c", uid: "u2" }), {
    forbidden: "no",
  });
  strictEqual(rest.requests[1]!.path, "/api/v1/namespaces/ns/persistentvolumeclaims/c");
});
