/**
 * The controller shell with small in-memory fakes of its ports (unit tests
 * only, tests/fakes/provision_world.ts): what it asks the driver and the API
 * server, which events it records and what it tells the worker pool, for
 * each kind of outcome.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { CsiError } from "../csi/status.ts";
import {
  claim as buildClaim,
  CLAIM_UID,
  DRIVER,
  storageClass,
} from "../../tests/builders/provision.ts";
import { KEY, PV_NAME, reasons, volumeOf, world } from "../../tests/fakes/provision_world.ts";
import { SAVED_MEMORY_MS } from "./pv/saver.ts";

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
  deepStrictEqual(w.record.journaledAtCreate, [[PV_NAME]], "the intent is on disk before the call");
  deepStrictEqual(w.journal.log, [`record ${PV_NAME}`, `clear ${PV_NAME} pv_saved`]);
  deepStrictEqual(w.record.answered, [CLAIM_UID], "the race stops counting its space");
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
  deepStrictEqual(w.record.released, [], "a WaitForFirstConsumer claim goes back to the scheduler");
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
  w.deleteClaim();
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

Deno.test("sync() hands an unowned claim of an Immediate class to the race, and nothing else", async () => {
  const unowned = buildClaim({
    metadata: { annotations: { "volume.kubernetes.io/storage-provisioner": DRIVER } },
  });
  const w = world({
    claims: [unowned],
    classes: [storageClass({ volumeBindingMode: "Immediate" })],
  });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.raced, [KEY]);
  deepStrictEqual([w.record.created.length, w.record.events.length], [0, 0]);
  w.close();
});

Deno.test("ResourceExhausted on a claim this node won in the race: released to the race, selected-node removed", async () => {
  const w = world({
    classes: [storageClass({ volumeBindingMode: "Immediate" })],
    answers: [new CsiError("/csi.v1.Controller/CreateVolume", 8, "pool fast is full")],
  });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.released, [CLAIM_UID]);
  deepStrictEqual(w.record.selectedNodeRemoved, ["data"]);
  deepStrictEqual(w.record.raced, [], "owned: provisioned, not raced");
  deepStrictEqual(w.record.answered, [], "no volume: the race keeps counting it until released");
  w.close();
});

Deno.test("a claim synced again before its saved PV reaches the PV cache is not provisioned twice", async () => {
  const w = world();
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(await w.sync(), { kind: "retryAfter", ms: SAVED_MEMORY_MS });
  strictEqual(w.record.created.length, 1, "one CreateVolume");
  strictEqual(w.record.savedPvs.length, 1);
  deepStrictEqual(reasons(w.record.events), [
    "Normal Provisioning",
    "Normal ProvisioningSucceeded",
  ]);
  w.volumes.set(PV_NAME, w.record.savedPvs[0]!);
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.created.length, 1);
  w.close();
});

Deno.test("a saved PV that never reaches the PV cache: its claim is provisioned again once the wait is over", async () => {
  const w = world();
  await w.sync();
  w.clock.ms += SAVED_MEMORY_MS - 1;
  deepStrictEqual(await w.sync(), { kind: "retryAfter", ms: 1 });
  w.clock.ms += 1;
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.created.length, 2, "CreateVolume again, of the same name");
  strictEqual(w.record.created[1]?.name, PV_NAME);
  w.close();
});
