/** KubeApi's PV calls with a scripted REST client: which answers are values and which are thrown. */
import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import type { PersistentVolume } from "../model/objects.ts";
import { KubeApi } from "./api.ts";
import type { KubeRequest, KubeRest } from "./rest.ts";
import { apiError } from "./rest_types.ts";

function restAnswering(answers: Record<string, () => unknown>): KubeRest & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    request: <T>(request: KubeRequest) => {
      const key = `${request.method} ${request.path}`;
      seen.push(key);
      const answer = answers[key];
      if (answer === undefined) return Promise.reject(new Error(`unexpected ${key}`));
      try {
        return Promise.resolve(answer() as T);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    stream: () => Promise.reject(new Error("no streams")),
    close: () => {},
  };
}

const PV: PersistentVolume = {
  metadata: { name: "pvc-1" },
  spec: { csi: { driver: "d", volumeHandle: "ours" } },
};
const POST = "POST /api/v1/persistentvolumes";
const GET = "GET /api/v1/persistentvolumes/pvc-1";

const status = (code: number, reason: string, causes: unknown[] = []) =>
  JSON.stringify({ kind: "Status", code, reason, message: `${reason}!`, details: { causes } });

Deno.test("createPersistentVolume(): a 422 is a refusal naming the fields", async () => {
  const rest = restAnswering({
    [POST]: () => {
      throw apiError(
        422,
        status(422, "Invalid", [
          { field: "metadata.labels", message: "bad" },
          { field: "metadata.labels", message: "worse" },
          { message: "no field" },
        ]),
      );
    },
  });
  deepStrictEqual(await new KubeApi(rest).createPersistentVolume(PV), {
    kind: "rejected",
    status: 422,
    reason: "Invalid",
    message: "Invalid!",
    fields: ["metadata.labels"],
  });
});

Deno.test("createPersistentVolume(): a 409 reads the PV that exists", async () => {
  const theirs = { metadata: { name: "pvc-1" }, spec: { csi: { driver: "d", volumeHandle: "x" } } };
  const rest = restAnswering({
    [POST]: () => {
      throw apiError(409, status(409, "AlreadyExists"));
    },
    [GET]: () => theirs,
  });
  const outcome = await new KubeApi(rest).createPersistentVolume(PV);
  strictEqual(outcome.kind, "exists");
  strictEqual(outcome.kind === "exists" && outcome.existing?.spec.csi?.volumeHandle, "x");
  deepStrictEqual(rest.seen, [POST, GET]);
});

Deno.test("createPersistentVolume(): 403, 429 and 5xx are thrown for a retry", async () => {
  for (const code of [401, 403, 408, 429, 500, 503]) {
    const rest = restAnswering({
      [POST]: () => {
        throw apiError(code, status(code, "Nope"));
      },
    });
    await rejects(new KubeApi(rest).createPersistentVolume(PV), /Nope!/, String(code));
  }
});

Deno.test("readPersistentVolume(): undefined when it does not exist", async () => {
  const rest = restAnswering({
    [GET]: () => {
      throw apiError(404, status(404, "NotFound"));
    },
  });
  strictEqual(await new KubeApi(rest).readPersistentVolume("pvc-1"), undefined);
});
