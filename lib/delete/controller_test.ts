import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { CsiError } from "../csi/status.ts";
import type { DeleteVolumeRequest } from "../csi/types.ts";
import type { EventRecord } from "../model/events.ts";
import type { PersistentVolume } from "../model/objects.ts";
import { capturing } from "../../tests/fakes/logger.ts";
import { DeleteController } from "./controller.ts";
import { PV_PROTECTION_FINALIZER as FINALIZER } from "../model/keys.ts";
import { DRIVER, TOPOLOGY_KEY as KEY } from "../../tests/builders/provision.ts";

function pv(options: {
  phase?: string;
  policy?: string;
  node?: string | null;
  finalizers?: string[];
  secret?: string;
} = {}): PersistentVolume {
  const node = options.node === undefined ? "node-a" : options.node;
  return {
    metadata: {
      name: "pvc-1",
      uid: "pv-uid",
      annotations: {
        "volume.kubernetes.io/provisioner-deletion-secret-name": options.secret ?? "",
        "volume.kubernetes.io/provisioner-deletion-secret-namespace": options.secret === undefined
          ? ""
          : "apps",
      },
      finalizers: options.finalizers ?? [FINALIZER],
    },
    spec: {
      csi: { driver: DRIVER, volumeHandle: "vol-1" },
      persistentVolumeReclaimPolicy: options.policy ?? "Delete",
      storageClassName: "fast",
      ...(node === null ? {} : {
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [{
              matchExpressions: [{ key: KEY, operator: "In", values: [node] }],
            }],
          },
        },
      }),
    },
    status: { phase: options.phase ?? "Released" },
  };
}

function world(
  initial: PersistentVolume,
  options: {
    attachedTo?: string;
    deleteFails?: CsiError;
    refusedLimit?: number;
    /** The PV as the API server has it (default: as the cache has it); an Error: the read fails. */
    server?: PersistentVolume | null | Error;
  } = {},
) {
  const log = capturing(2);
  const record = {
    calls: [] as string[],
    deleted: [] as DeleteVolumeRequest[],
    events: [] as EventRecord[],
    metrics: [] as string[],
    logs: log.lines,
    /** PVs read from the API server. */
    reads: [] as string[],
  };
  let volume: PersistentVolume | undefined = initial;
  const controller = new DeleteController({
    volumes: { get: (name) => (name === volume?.metadata.name ? volume : undefined) },
    classes: { get: () => undefined },
    api: {
      patchFinalizer: (name, change) => {
        record.calls.push(`finalizer ${change} ${name}`);
        return Promise.resolve("patched");
      },
      deletePersistentVolume: (name) => {
        record.calls.push(`delete ${name}`);
        return Promise.resolve("deleted");
      },
      readPersistentVolume: (name) => {
        record.reads.push(name);
        const server = options.server === undefined ? volume : options.server;
        if (server instanceof Error) return Promise.reject(server);
        return Promise.resolve(server?.metadata.name === name ? server : undefined);
      },
      readSecretData: (ref) =>
        ref.name === "gone"
          ? Promise.reject(new Error(`secrets "gone" not found`))
          : Promise.resolve({ key: "v" }),
    },
    csi: {
      deleteVolume: (request) => {
        record.deleted.push(request);
        return options.deleteFails ? Promise.reject(options.deleteFails) : Promise.resolve();
      },
    },
    ...(options.attachedTo ? { attachments: { attachedNode: () => options.attachedTo } } : {}),
    events: { record: (event) => record.events.push(event) },
    metrics: {
      deleted: (sc) => record.metrics.push(`deleted ${sc}`),
      failed: (sc) => record.metrics.push(`failed ${sc}`),
      refused: (reason) => record.metrics.push(`refused ${reason}`),
      refusedSet: {
        size: (entries) => record.metrics.push(`refused set ${entries}`),
        evicted: () => record.metrics.push("refused set evicted"),
      },
    },
    logger: log.logger,
  }, {
    segment: { [KEY]: "node-a" },
    ...(options.refusedLimit ? { refusedLimit: options.refusedLimit } : {}),
  });
  return {
    record,
    sync: (name = "pvc-1") => controller.sync(name, new AbortController().signal),
    wants: () => controller.wants("pvc-1", volume),
    update: (next: PersistentVolume | undefined) => (volume = next),
  };
}

Deno.test("a Released PV of this node: DeleteVolume, then the PV, then the finalizer; metric", async () => {
  const w = world(pv());
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.deleted, [{ volume_id: "vol-1", secrets: {} }]);
  deepStrictEqual(w.record.calls, ["delete pvc-1", "finalizer remove pvc-1"]);
  deepStrictEqual(w.record.metrics, ["deleted fast"]);
  deepStrictEqual(w.record.reads, ["pvc-1"], "read from the API server before DeleteVolume");
});

Deno.test("a cached Released PV that the API server has as Retain now: no DeleteVolume, the PV stays, logged as upstream", async () => {
  const w = world(pv(), { server: pv({ policy: "Retain" }) });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.deleted, [], "DeleteVolume was sent on the cache's stale Delete");
  deepStrictEqual(w.record.calls, [], "the PV object was touched");
  deepStrictEqual([w.record.events, w.record.metrics], [[], []]);
  const skipped = w.record.logs.find((line) => line.includes("no longer needs deletion"));
  ok(skipped?.includes("reclaim policy is Retain, not Delete"), w.record.logs.join(""));
});

Deno.test("the API server's PV decides: gone, Bound again or another node's means no DeleteVolume", async () => {
  const cases = [null, pv({ phase: "Bound" }), pv({ node: "node-b" })];
  for (const server of cases) {
    const w = world(pv(), { server });
    deepStrictEqual(await w.sync(), { kind: "done" });
    deepStrictEqual([w.record.deleted, w.record.calls], [[], []], JSON.stringify(server));
  }
});

Deno.test("the PV cannot be read before DeleteVolume: no DeleteVolume, VolumeFailedDelete, retried", async () => {
  const w = world(pv(), { server: new Error("connection refused") });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  deepStrictEqual(w.record.deleted, []);
  deepStrictEqual(w.record.events.map((e) => [e.reason, e.message]), [[
    "VolumeFailedDelete",
    "cannot read persistentvolume pvc-1 before deleting its volume: connection refused",
  ]]);
});

Deno.test("the API server's PV names another volume or secret: no DeleteVolume now, decided again later", async () => {
  const otherHandle = pv();
  otherHandle.spec.csi = { driver: DRIVER, volumeHandle: "vol-2" };
  for (const server of [otherHandle, pv({ secret: "creds" })]) {
    const w = world(pv(), { server });
    deepStrictEqual(await w.sync(), { kind: "retry" });
    deepStrictEqual([w.record.deleted, w.record.calls], [[], []]);
  }
});

Deno.test("the finalizer is added to a bound Delete PV and removed from a Retain PV, without DeleteVolume", async () => {
  const bound = world(pv({ phase: "Bound", finalizers: [] }));
  await bound.sync();
  deepStrictEqual(bound.record.calls, ["finalizer add pvc-1"]);
  const retained = world(pv({ policy: "Retain" }));
  await retained.sync();
  deepStrictEqual(retained.record.calls, ["finalizer remove pvc-1"]);
  strictEqual(bound.record.deleted.length + retained.record.deleted.length, 0);
});

Deno.test("another node's PV is left alone: no call, no event, no metric", async () => {
  const w = world(pv({ node: "node-b" }));
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual([w.record.calls, w.record.deleted, w.record.events, w.record.metrics], [
    [],
    [],
    [],
    [],
  ]);
});

Deno.test("a PV without node affinity is refused with a Warning and counted once", async () => {
  const w = world(pv({ node: null }));
  await w.sync();
  await w.sync();
  strictEqual(w.record.deleted.length, 0);
  strictEqual(w.record.events[0]?.reason, "VolumeDeleteRefused");
  deepStrictEqual(w.record.metrics, ["refused set 1", "refused no-node-affinity"]);
});

Deno.test("the set of refused PVs is bounded: driven past its limit, the oldest goes", async () => {
  const w = world(pv({ node: null }), { refusedLimit: 2 });
  for (const name of ["pv-a", "pv-b", "pv-c"]) {
    w.update({ ...pv({ node: null }), metadata: { ...pv().metadata, name } });
    await w.sync(name);
  }
  deepStrictEqual(w.record.metrics.filter((entry) => entry.startsWith("refused set")), [
    "refused set 1",
    "refused set 2",
    "refused set evicted",
    "refused set 2",
  ]);
});

Deno.test("a PV still attached is not deleted: VolumeFailedDelete names the node, and it is retried", async () => {
  const w = world(pv(), { attachedTo: "node-a" });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  strictEqual(w.record.deleted.length, 0);
  deepStrictEqual(w.record.events.map((e) => [e.reason, e.message]), [
    ["VolumeFailedDelete", "persistentvolume pvc-1 is still attached to node node-a"],
  ]);
  deepStrictEqual(w.record.metrics, ["failed fast"]);
});

Deno.test("a failed DeleteVolume is a VolumeFailedDelete event with the error, and a retry", async () => {
  const w = world(pv(), {
    deleteFails: new CsiError("/csi.v1.Controller/DeleteVolume", 14, "driver busy"),
  });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  strictEqual(w.record.events[0]?.message, "rpc error: code = Unavailable desc = driver busy");
  deepStrictEqual(w.record.calls, [], "the PV stays until its volume is deleted");
});

Deno.test("an unreadable deletion secret is reported and the volume deleted without it", async () => {
  const w = world(pv({ secret: "gone" }));
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.events[0]?.reason, "DeletionSecretUnavailable");
  deepStrictEqual(w.record.deleted[0]?.secrets, {});
  const withSecret = world(pv({ secret: "creds" }));
  await withSecret.sync();
  deepStrictEqual(withSecret.record.deleted[0]?.secrets, { key: "v" });
});

Deno.test("a deleted volume's later updates never send DeleteVolume again", async () => {
  const deleted = pv();
  const w = world(deleted);
  await w.sync();
  // The cache catches up in steps: deletion started, finalizer still there; then gone.
  w.update({
    ...deleted,
    metadata: { ...deleted.metadata, deletionTimestamp: "2026-11-21T00:00:00Z" },
  });
  deepStrictEqual(await w.sync(), { kind: "done" });
  w.update(undefined);
  await w.sync();
  strictEqual(w.record.deleted.length, 1);
  deepStrictEqual(w.record.calls, [
    "delete pvc-1",
    "finalizer remove pvc-1",
    "finalizer remove pvc-1",
  ]);
  deepStrictEqual(w.record.metrics, ["deleted fast"], "counted once");
});

Deno.test("only changes that give sync work are wanted, and a deleted volume's PV until it is gone", async () => {
  const bound = world(pv({ phase: "Bound" }));
  strictEqual(bound.wants(), false, "bound, finalizer in place: nothing to do");
  bound.update(pv({ phase: "Bound", finalizers: [] }));
  strictEqual(bound.wants(), true, "finalizer missing");
  bound.update(undefined);
  strictEqual(bound.wants(), false, "gone, never deleted here");

  const released = pv();
  const w = world(released);
  strictEqual(w.wants(), true);
  await w.sync();
  // Deletion started, our finalizer gone: sync() must still see it to forget it.
  w.update({
    ...released,
    metadata: { ...released.metadata, finalizers: [], deletionTimestamp: "2026-11-21T00:00:00Z" },
  });
  strictEqual(w.wants(), true);
  w.update(undefined);
  strictEqual(w.wants(), true, "its memo goes with the PV's removal");
  await w.sync();
  strictEqual(w.wants(), false);
});
