/**
 * The controller shell with small in-memory fakes of its ports (unit tests
 * only): what it asks the driver and the API server, which events it
 * records and what it tells the worker pool, for each kind of outcome.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { CsiError } from "../csi/status.ts";
import type {
  CreateVolumeRequest,
  CreateVolumeResponse,
  DeleteVolumeRequest,
} from "../csi/types.ts";
import type { EventRecord } from "../model/events.ts";
import type { Claim, PersistentVolume, StorageClass } from "../model/objects.ts";
import { createLogger } from "../log/logger.ts";
import { WorkQueue } from "../queue/work_queue.ts";
import type { HandleOutcome } from "../queue/workers.ts";
import { ProvisionController } from "./controller.ts";
import type { ProvisionApi, ProvisionCsi } from "./ports.ts";
import type { ProvisionOptions } from "./request.ts";
import { PvSaver } from "./pv_saver.ts";
import { FakeDataSources } from "../../tests/fakes/data_sources.ts";
import {
  claim as buildClaim,
  CLAIM_UID,
  DRIVER,
  NODE,
  provisionOptions,
  SNAPSHOT_HANDLE,
  snapshotContent,
  SOURCE_HANDLE,
  sourceClaim,
  sourceVolume,
  storageClass,
  TOPOLOGY_KEY,
  volumeSnapshot,
} from "../../tests/builders/provision.ts";
import {
  CLONE_PROTECTION_FINALIZER as CLONE_FINALIZER,
  SNAPSHOT_SOURCE_PROTECTION_FINALIZER as SNAPSHOT_FINALIZER,
} from "../model/keys.ts";

const KEY = "apps/data";
const PV_NAME = `pvc-${CLAIM_UID}`;
const quiet = createLogger({ verbosity: 0, sink: { write: () => {} } });

type CreateAnswer = CreateVolumeResponse | CsiError;

function volumeOf(request: CreateVolumeRequest, capacity?: string): CreateVolumeResponse {
  return {
    volume: {
      capacity_bytes: capacity ?? request.capacity_range?.required_bytes ?? "0",
      volume_id: `vol-${request.name}`,
      volume_context: {},
      content_source: request.volume_content_source ?? null,
      accessible_topology: [{ segments: { [TOPOLOGY_KEY]: NODE } }],
    },
  };
}

/** The world as the controller sees it, recorded. */
function world(
  options: {
    claims?: Claim[];
    classes?: StorageClass[];
    answers?: CreateAnswer[];
    sources?: FakeDataSources;
    prepare?: Partial<ProvisionOptions>;
    respond?: (request: CreateVolumeRequest) => CreateVolumeResponse;
  } = {},
) {
  const claims = new Map(
    (options.claims ?? [buildClaim()]).map((
      c,
    ) => [`${c.metadata.namespace}/${c.metadata.name}`, c]),
  );
  const classes = new Map((options.classes ?? [storageClass()]).map((c) => [c.metadata.name, c]));
  const volumes = Object.assign(new Map<string, PersistentVolume>(), {
    list: () => [...volumes.values()],
  });
  const sources = options.sources ?? new FakeDataSources();
  const answers = [...(options.answers ?? [])];
  const record = {
    created: [] as CreateVolumeRequest[],
    deleted: [] as DeleteVolumeRequest[],
    savedPvs: [] as PersistentVolume[],
    events: [] as EventRecord[],
    selectedNodeRemoved: [] as string[],
    failed: 0,
    succeeded: 0,
  };
  let pvCreateFails = 0;
  const csi: ProvisionCsi = {
    createVolume: (request) => {
      record.created.push(request);
      const answer = answers.shift() ?? options.respond?.(request) ?? volumeOf(request);
      return answer instanceof CsiError ? Promise.reject(answer) : Promise.resolve(answer);
    },
    deleteVolume: (request) => {
      record.deleted.push(request);
      return Promise.resolve();
    },
  };
  const api: ProvisionApi = {
    createPersistentVolume: (pv) => {
      if (pvCreateFails-- > 0) return Promise.reject(new Error("apiserver unavailable"));
      record.savedPvs.push(pv);
      return Promise.resolve("created");
    },
    readClaim: (key) => Promise.resolve(claims.get(`${key.namespace}/${key.name}`)),
    removeSelectedNode: (claim) => {
      record.selectedNodeRemoved.push(claim.metadata.name);
      return Promise.resolve("removed");
    },
    readSecretData: (ref) =>
      ref.name === "missing"
        ? Promise.reject(new Error(`secrets "missing" not found`))
        : Promise.resolve({ password: "s3cret" }),
    readVolumeAttributesClass: () => Promise.resolve(undefined),
  };
  const events = { record: (event: EventRecord) => record.events.push(event) };
  const saveQueue = new WorkQueue();
  const saver = new PvSaver({ api, events, logger: quiet, queue: saveQueue });
  const controller = new ProvisionController({
    caches: { claims, classes, volumes },
    api,
    sources,
    csi,
    events,
    metrics: { succeeded: () => record.succeeded++, failed: () => record.failed++ },
    saver,
    logger: quiet,
  }, {
    decide: { driverName: DRIVER, nodeName: NODE, immediateBinding: true },
    prepare: provisionOptions(options.prepare),
    persistentVolume: {
      driverName: DRIVER,
      identity: "123-4-driver-node-a",
      controllerPublishReadonly: false,
      topologySupported: true,
    },
    timeoutMs: 1000,
  });
  const sync = (key = KEY): Promise<HandleOutcome> =>
    controller.sync(key, new AbortController().signal);
  return {
    claims,
    classes,
    volumes,
    record,
    controller,
    saver,
    sync,
    failPvCreate: (times: number) => (pvCreateFails = times),
    close: () => saveQueue.shutDown(),
  };
}

const reasons = (events: EventRecord[]) => events.map((event) => `${event.type} ${event.reason}`);

Deno.test("sync() provisions a claim selected to this node: CreateVolume, PV, two events, metric", async () => {
  const w = world();
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.created.length, 1);
  strictEqual(w.record.created[0]?.name, PV_NAME);
  strictEqual(w.record.savedPvs[0]?.metadata.name, PV_NAME);
  strictEqual(w.record.savedPvs[0]?.spec.claimRef?.uid, CLAIM_UID);
  deepStrictEqual(reasons(w.record.events), [
    "Normal Provisioning",
    "Normal ProvisioningSucceeded",
  ]);
  strictEqual(w.record.events[1]?.message, `Successfully provisioned volume ${PV_NAME}`);
  strictEqual(
    w.record.events[0]?.message,
    'External provisioner is provisioning volume for claim "apps/data"',
  );
  strictEqual(w.record.succeeded, 1);
  w.close();
});

Deno.test("sync() of a claim selected to another node makes no call and records no event", async () => {
  const other = buildClaim({
    metadata: {
      annotations: {
        "volume.kubernetes.io/storage-provisioner": DRIVER,
        "volume.kubernetes.io/selected-node": "node-b",
      },
    },
  });
  const w = world({ claims: [other] });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual([w.record.created.length, w.record.events.length, w.record.failed], [0, 0, 0]);
  w.close();
});

Deno.test("sync() does not call CreateVolume when the claim's PV already exists", async () => {
  const w = world();
  w.volumes.set(PV_NAME, { metadata: { name: PV_NAME }, spec: {} });
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.created.length, 0);
  w.close();
});

Deno.test("ResourceExhausted removes selected-node so that the scheduler picks again", async () => {
  const w = world({
    answers: [new CsiError("/csi.v1.Controller/CreateVolume", 8, "pool fast is full")],
  });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.selectedNodeRemoved, ["data"]);
  deepStrictEqual(reasons(w.record.events), ["Normal Provisioning", "Warning ProvisioningFailed"]);
  strictEqual(
    w.record.events[1]?.message,
    "rpc error: code = ResourceExhausted desc = pool fast is full",
  );
  strictEqual(w.record.failed, 1);
  w.close();
});

Deno.test("InvalidArgument is infeasible: a slow retry and upstream's event message", async () => {
  const w = world({
    answers: [new CsiError("/csi.v1.Controller/CreateVolume", 3, "unknown kind")],
  });
  const outcome = await w.sync();
  deepStrictEqual(outcome, { kind: "retryAfter", ms: 300_000 });
  strictEqual(
    w.record.events[1]?.message,
    "Volume provisioning failed with infeasible error. Retries will be delayed. rpc error: code = InvalidArgument desc = unknown kind",
  );
  const again = await w.sync();
  strictEqual(again.kind, "retryAfter", "the slow set holds the claim back");
  strictEqual(w.record.created.length, 1, "no second CreateVolume while in the slow set");
  w.close();
});

Deno.test("a claim deleted while CreateVolume runs in the background does not leak its volume", async () => {
  const w = world({
    answers: [new CsiError("/csi.v1.Controller/CreateVolume", 4, "context deadline exceeded")],
  });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  strictEqual(w.controller.inProgress, 1);
  w.claims.delete(KEY);
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.created.length, 2, "CreateVolume asked again, with the same request");
  deepStrictEqual(w.record.created[1], w.record.created[0]);
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  strictEqual(w.record.savedPvs.length, 0, "no PV for a deleted claim");
  strictEqual(w.controller.inProgress, 0);
  w.close();
});

Deno.test("a volume smaller than requested is deleted again and the claim retried", async () => {
  const w = world({
    answers: [{
      ...volumeOf({ name: PV_NAME, volume_capabilities: [], parameters: {}, secrets: {} }, "1024"),
    }],
  });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  strictEqual(w.record.deleted[0]?.volume_id, `vol-${PV_NAME}`);
  ok(
    w.record.events[1]?.message.startsWith(
      "created volume capacity 1024 less than requested capacity",
    ),
    w.record.events[1]?.message ?? "no event",
  );
  strictEqual(w.record.savedPvs.length, 0);
  w.close();
});

Deno.test("a PV that cannot be saved is kept and retried in the background; the volume is kept", async () => {
  const w = world();
  w.failPvCreate(1);
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.saver.pending, 1);
  strictEqual(w.record.deleted.length, 0);
  strictEqual(reasons(w.record.events).includes("Normal ProvisioningSucceeded"), false);
  w.close();
});

Deno.test("a missing provisioner secret is a Warning naming it, and nothing is created", async () => {
  const sc = storageClass({
    parameters: {
      "csi.storage.k8s.io/provisioner-secret-name": "missing",
      "csi.storage.k8s.io/provisioner-secret-namespace": "apps",
    },
  });
  const w = world({ classes: [sc] });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  strictEqual(w.record.created.length, 0);
  deepStrictEqual(w.record.events.map((event) => [event.type, event.reason, event.message]), [
    ["Normal", "Provisioning", 'External provisioner is provisioning volume for claim "apps/data"'],
    [
      "Warning",
      "ProvisioningFailed",
      'error getting secret missing in namespace apps: secrets "missing" not found ' +
      '(StorageClass "fast", parameters["csi.storage.k8s.io/provisioner-secret-name"] and ' +
      'parameters["csi.storage.k8s.io/provisioner-secret-namespace"])',
    ],
  ]);
  w.close();
});

Deno.test("the provisioner secret's data goes into CreateVolume and never into an event", async () => {
  const sc = storageClass({
    parameters: {
      "csi.storage.k8s.io/provisioner-secret-name": "creds",
      "csi.storage.k8s.io/provisioner-secret-namespace": "apps",
    },
  });
  const w = world({ classes: [sc] });
  await w.sync();
  deepStrictEqual(w.record.created[0]?.secrets, { password: "s3cret" });
  ok(!JSON.stringify(w.record.events).includes("s3cret"));
  w.close();
});

const RESTORE_SPEC = {
  dataSource: { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: "snap" },
};
const CAN_RESTORE_AND_CLONE = {
  controllerService: true,
  controller: ["CREATE_DELETE_VOLUME", "CREATE_DELETE_SNAPSHOT", "CLONE_VOLUME"],
} satisfies ProvisionOptions["capabilities"];

/** A world whose driver can restore and clone, with the snapshot "snap" of "origin". */
function sourceWorld(
  options: {
    claim: Claim;
    sourceNode?: string;
    answers?: CreateAnswer[];
    respond?: (request: CreateVolumeRequest) => CreateVolumeResponse;
  },
) {
  const sources = new FakeDataSources();
  sources.snapshots.set("apps/snap", volumeSnapshot());
  sources.contents.set("snapcontent-1", snapshotContent());
  const w = world({
    claims: [options.claim, sourceClaim()],
    sources,
    prepare: { capabilities: CAN_RESTORE_AND_CLONE },
    ...(options.answers ? { answers: options.answers } : {}),
    ...(options.respond ? { respond: options.respond } : {}),
  });
  const source = sourceVolume({ node: options.sourceNode ?? NODE });
  if (options.sourceNode === undefined) w.volumes.set(source.metadata.name, source);
  else sources.volumes.set(source.metadata.name, source);
  sources.observe = () => `CreateVolume calls: ${w.record.created.length}`;
  return { ...w, sources };
}

Deno.test("a restore: the snapshot's finalizer is added before CreateVolume and removed after the PV", async () => {
  const w = sourceWorld({ claim: buildClaim({ spec: RESTORE_SPEC }) });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created[0]?.volume_content_source, {
    snapshot: { snapshot_id: SNAPSHOT_HANDLE },
  });
  deepStrictEqual(w.sources.finalizerChanges, [
    `add ${SNAPSHOT_FINALIZER} apps/snap (CreateVolume calls: 0)`,
    `remove ${SNAPSHOT_FINALIZER} apps/snap (CreateVolume calls: 1)`,
  ]);
  deepStrictEqual(w.record.savedPvs.length, 1);
  w.close();
});

Deno.test("a clone: the source claim's finalizer is added before CreateVolume and left to the cloning-protection controller", async () => {
  const w = sourceWorld({
    claim: buildClaim({ spec: { dataSource: { kind: "PersistentVolumeClaim", name: "origin" } } }),
  });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created[0]?.volume_content_source, {
    volume: { volume_id: SOURCE_HANDLE },
  });
  deepStrictEqual(w.sources.finalizerChanges, [
    `add ${CLONE_FINALIZER} apps/origin (CreateVolume calls: 0)`,
  ]);
  w.close();
});

Deno.test("a restore whose source is on another node: no CreateVolume, a Warning, back to the scheduler; again without reads", async () => {
  const w = sourceWorld({ claim: buildClaim({ spec: RESTORE_SPEC }), sourceNode: "node-b" });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created, []);
  deepStrictEqual(w.record.selectedNodeRemoved, ["data"]);
  deepStrictEqual(reasons(w.record.events), ["Normal Provisioning", "Warning ProvisioningFailed"]);
  ok(w.record.events[1]?.message.includes(`the node with ${TOPOLOGY_KEY}=node-b`));
  deepStrictEqual(w.sources.finalizerChanges, []);
  const reads = w.sources.reads;
  // Selected to this node again within the slow retry: sent back at once.
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.sources.reads, reads);
  deepStrictEqual(w.record.created, []);
  deepStrictEqual(w.record.selectedNodeRemoved, ["data", "data"]);
  deepStrictEqual(w.record.events.at(-1)?.message, w.record.events[1]?.message);
  w.close();
});

Deno.test("a restore of unknown place: CreateVolume's NotFound is explained and the claim sent back", async () => {
  const w = sourceWorld({
    claim: buildClaim({ spec: RESTORE_SPEC }),
    answers: [new CsiError("CreateVolume", 5, "no such snapshot")],
  });
  w.sources.contents.set(
    "snapcontent-1",
    snapshotContent({ spec: { source: { snapshotHandle: SNAPSHOT_HANDLE } } }),
  );
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created.length, 1);
  deepStrictEqual(w.record.selectedNodeRemoved, ["data"]);
  const warning = w.record.events.at(-1)?.message ?? "";
  ok(warning.includes("which node does is not known"), warning);
  ok(warning.includes('VolumeSnapshotContent "snapcontent-1" is pre-provisioned'), warning);
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created.length, 1, "no second CreateVolume within the slow retry");
  w.close();
});

Deno.test("a restore whose answer names no content source is deleted again and retried", async () => {
  const w = sourceWorld({
    claim: buildClaim({ spec: RESTORE_SPEC }),
    respond: (request) => ({ volume: { ...volumeOf(request).volume!, content_source: null } }),
  });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  deepStrictEqual(w.record.events.at(-1)?.message, "volume content source missing");
  deepStrictEqual(w.record.savedPvs, []);
  w.close();
});

Deno.test("a snapshot that cannot be protected: without RBAC restored anyway, gone is a retry", async () => {
  const forbidden = sourceWorld({ claim: buildClaim({ spec: RESTORE_SPEC }) });
  forbidden.sources.snapshotWrite = "forbidden";
  deepStrictEqual(await forbidden.sync(), { kind: "done" });
  deepStrictEqual(forbidden.record.created.length, 1);
  forbidden.close();
  const gone = sourceWorld({ claim: buildClaim({ spec: RESTORE_SPEC }) });
  gone.sources.snapshotWrite = "gone";
  deepStrictEqual(await gone.sync(), { kind: "retry" });
  deepStrictEqual(gone.record.created, []);
  deepStrictEqual(
    gone.record.events.at(-1)?.message,
    `error adding finalizer ${SNAPSHOT_FINALIZER} to VolumeSnapshot "apps/snap": ` +
      'volumesnapshots.snapshot.storage.k8s.io "snap" not found',
  );
  gone.close();
});
