import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { capturing } from "../../tests/fakes/logger.ts";
import { PatchPermissions } from "./patch_or_update.ts";
import { KubeApiError } from "./rest/client.ts";
import {
  changeSnapshotFinalizer,
  readVolumeSnapshot,
  SnapshotDiscovery,
  trimVolumeSnapshot,
  trimVolumeSnapshotContent,
} from "./snapshots.ts";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
import { SNAPSHOT_SOURCE_PROTECTION_FINALIZER as F } from "../model/keys.ts";

const PATH = "/apis/snapshot.storage.k8s.io/v1/namespaces/apps/volumesnapshots/snap";
const REF = { namespace: "apps", name: "snap" };
const conflict = new KubeApiError(409, "Conflict", "the object has been modified");

function rawSnapshot(resourceVersion: string, finalizers?: string[]) {
  return {
    metadata: {
      name: "snap",
      namespace: "apps",
      uid: "u",
      resourceVersion,
      managedFields: [{}],
      ...(finalizers ? { finalizers } : {}),
    },
    spec: { source: { persistentVolumeClaimName: "origin" }, volumeSnapshotClassName: "c" },
    status: { boundVolumeSnapshotContentName: "c1", readyToUse: true, restoreSize: "1Gi", x: 1 },
  };
}

Deno.test("trims keep what a restore checks and nothing more", () => {
  deepStrictEqual(trimVolumeSnapshot(rawSnapshot("3", [F])), {
    metadata: { name: "snap", namespace: "apps", uid: "u", resourceVersion: "3", finalizers: [F] },
    spec: { source: { persistentVolumeClaimName: "origin" } },
    status: { boundVolumeSnapshotContentName: "c1", readyToUse: true, restoreSize: "1Gi" },
  });
  const content = {
    metadata: { name: "c1", uid: "cu", resourceVersion: "4", annotations: { a: "b" } },
    spec: {
      driver: "d",
      deletionPolicy: "Delete",
      volumeSnapshotRef: { kind: "VolumeSnapshot", namespace: "apps", name: "snap", uid: "u" },
      sourceVolumeMode: "Filesystem",
      source: { volumeHandle: "h" },
    },
    status: { snapshotHandle: "sh", readyToUse: true },
  };
  deepStrictEqual(
    trimVolumeSnapshotContent(content),
    {
      metadata: { name: "c1", uid: "cu", resourceVersion: "4", annotations: { a: "b" } },
      spec: {
        driver: "d",
        volumeSnapshotRef: { namespace: "apps", name: "snap", uid: "u" },
        sourceVolumeMode: "Filesystem",
        source: { volumeHandle: "h" },
      },
      status: { snapshotHandle: "sh" },
    },
  );
});

Deno.test("readVolumeSnapshot() is undefined for a missing snapshot", async () => {
  const rest = recordingRest([new KubeApiError(404, "NotFound", "not found")]);
  strictEqual(await readVolumeSnapshot(rest, REF), undefined);
  strictEqual(rest.requests[0]?.path, PATH);
});

Deno.test("changeSnapshotFinalizer() writes the whole list with the resourceVersion, reading again after a conflict", async () => {
  const rest = recordingRest([
    rawSnapshot("5", ["other"]),
    conflict,
    rawSnapshot("6", ["other"]),
    {},
  ]);
  strictEqual(
    await changeSnapshotFinalizer(rest, { ref: REF, finalizer: F, action: "add" }),
    "changed",
  );
  deepStrictEqual(rest.requests.map((request) => [request.method, request.body]), [
    ["GET", undefined],
    ["PATCH", { metadata: { resourceVersion: "5", finalizers: ["other", F] } }],
    ["GET", undefined],
    ["PATCH", { metadata: { resourceVersion: "6", finalizers: ["other", F] } }],
  ]);
  strictEqual(rest.requests[1]?.contentType, "application/merge-patch+json");
});

Deno.test("changeSnapshotFinalizer() with a current copy and one try: no read, a conflict is a value", async () => {
  const rest = recordingRest([conflict]);
  const current = trimVolumeSnapshot(rawSnapshot("8", [F, "other"]));
  strictEqual(
    await changeSnapshotFinalizer(rest, { ref: REF, finalizer: F, action: "remove" }, {
      current,
      tries: 1,
    }),
    "conflict",
  );
  deepStrictEqual(rest.requests.map((request) => [request.method, request.body]), [
    ["PATCH", { metadata: { resourceVersion: "8", finalizers: ["other"] } }],
  ]);
});

Deno.test("changeSnapshotFinalizer(): nothing to do, gone and forbidden are values", async () => {
  const present = recordingRest([rawSnapshot("1", [F])]);
  strictEqual(
    await changeSnapshotFinalizer(present, { ref: REF, finalizer: F, action: "add" }),
    "unchanged",
  );
  const gone = recordingRest([new KubeApiError(404, "NotFound", "gone")]);
  strictEqual(
    await changeSnapshotFinalizer(gone, { ref: REF, finalizer: F, action: "add" }),
    "gone",
  );
  const refused = new KubeApiError(403, "Forbidden", "no");
  const forbidden = recordingRest([rawSnapshot("1"), refused, rawSnapshot("1"), refused]);
  strictEqual(
    await changeSnapshotFinalizer(forbidden, { ref: REF, finalizer: F, action: "add" }),
    "forbidden",
  );
  deepStrictEqual(forbidden.requests.map((request) => request.method), [
    "GET",
    "PATCH",
    "GET",
    "PUT",
  ]);
});

Deno.test("changeSnapshotFinalizer() updates the snapshot read where patch is forbidden, as upstream", async () => {
  const rest = recordingRest([
    rawSnapshot("5", ["other"]),
    new KubeApiError(403, "Forbidden", "cannot patch resource"),
    rawSnapshot("5", ["other"]),
    {},
  ]);
  const patches = new PatchPermissions();
  strictEqual(
    await changeSnapshotFinalizer(rest, { ref: REF, finalizer: F, action: "add" }, { patches }),
    "changed",
  );
  const put = rest.requests[3]!;
  deepStrictEqual([put.method, put.path], ["PUT", PATH]);
  deepStrictEqual(put.body, rawSnapshot("5", ["other", F]));
  strictEqual(patches.forbidden("volumesnapshots.snapshot.storage.k8s.io"), true);
});

Deno.test("SnapshotDiscovery asks while not served, logs once each way, and keeps a yes", async () => {
  const { logger, lines } = capturing(2);
  const answers = [false, false, true];
  let asked = 0;
  const discovery = new SnapshotDiscovery(() => {
    asked++;
    return Promise.resolve(answers.shift()!);
  }, { logger });
  strictEqual(await discovery.served(), false);
  strictEqual(await discovery.served(), false);
  strictEqual(await discovery.served(), true);
  strictEqual(await discovery.served(), true);
  strictEqual(asked, 3, "a yes is not asked again");
  deepStrictEqual(lines.filter((line) => line.includes("is not served")).length, 1);
  deepStrictEqual(lines.filter((line) => line.includes("is now served")).length, 1);
});

Deno.test("SnapshotDiscovery logs a missing API once when restores ask at the same moment", async () => {
  const { logger, lines } = capturing(2);
  const discovery = new SnapshotDiscovery(() => Promise.resolve(false), { logger });
  deepStrictEqual(await Promise.all([discovery.served(), discovery.served()]), [false, false]);
  strictEqual(lines.filter((line) => line.includes("is not served")).length, 1);
});
