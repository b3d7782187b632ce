/**
 * The controller and the intent journal: every CreateVolume is journaled
 * first, and a key's sync settles the intents its claim no longer needs. The
 * first tests cover a claim replaced under the same name while in
 * background, a claim in background trimmed from the cache (it must not be
 * polled with GETs), and PV saves the API server refuses (422) or finds
 * taken (409).
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { CsiError } from "../csi/status.ts";
import { claim as buildClaim, DRIVER } from "../../tests/builders/provision.ts";
import { KEY, PV_NAME, pvHolding, reasons, world } from "../../tests/fakes/provision_world.ts";

const NEW_UID = "9a8b7c6d-0000-4000-8000-000000000001";
const TIMEOUT = () =>
  new CsiError("/csi.v1.Controller/CreateVolume", 4, "context deadline exceeded");

Deno.test("a claim deleted and created again under the same name while in background: the new claim is provisioned and the old volume deleted", async () => {
  const w = world({ answers: [TIMEOUT()] });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  w.putClaim(buildClaim({ metadata: { uid: NEW_UID } }));
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created.map((request) => request.name), [
    PV_NAME,
    PV_NAME,
    `pvc-${NEW_UID}`,
  ]);
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  deepStrictEqual(w.record.savedPvs.map((pv) => pv.metadata.name), [`pvc-${NEW_UID}`]);
  strictEqual(w.record.savedPvs[0]?.spec.claimRef?.uid, NEW_UID);
  deepStrictEqual(w.journal.entries(), []);
  w.close();
});

Deno.test("a claim in background that leaves the cache because it got bound to its PV: one GET, no loop, nothing deleted", async () => {
  const w = world({ answers: [TIMEOUT()] });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  w.claims.delete(KEY);
  w.serverClaims.set(KEY, buildClaim({ spec: { volumeName: PV_NAME } }));
  w.serverPvs.set(PV_NAME, pvHolding(PV_NAME, `vol-${PV_NAME}`));
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.claimReads, 1);
  strictEqual(w.record.deleted.length, 0);
  deepStrictEqual(w.journal.log.at(-1), `clear ${PV_NAME} pv_exists`);
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.claimReads, 1, "nothing left to read about");
  w.close();
});

Deno.test("a claim in background whose cache is behind the API server is retried with backoff, not every second", async () => {
  const w = world({ answers: [TIMEOUT()] });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  w.claims.delete(KEY);
  deepStrictEqual(await w.sync(), { kind: "retry" });
  strictEqual(w.journal.entries().length, 1, "the intent stays while the claim is ours");
  strictEqual(w.record.created.length, 1);
  w.close();
});

Deno.test("a claim in background that moved to another node: its volume is cleaned up and the loop ends", async () => {
  const w = world({ answers: [TIMEOUT()] });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  w.claims.delete(KEY);
  w.serverClaims.set(
    KEY,
    buildClaim({
      metadata: {
        annotations: {
          "volume.kubernetes.io/storage-provisioner": DRIVER,
          "volume.kubernetes.io/selected-node": "node-b",
        },
      },
    }),
  );
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  deepStrictEqual(w.journal.log.at(-1), `clear ${PV_NAME} volume_deleted`);
  w.close();
});

Deno.test("a PV the API server refuses with 422: Warning naming the field, volume deleted, claim retried", async () => {
  const w = world();
  w.pvCreateAnswer({
    kind: "rejected",
    status: 422,
    reason: "Invalid",
    message: 'PersistentVolume "x" is invalid: metadata.labels: Invalid value: "-bad-"',
    fields: ["metadata.labels"],
  });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  strictEqual(w.saver.pending, 0);
  deepStrictEqual(reasons(w.record.events), ["Normal Provisioning", "Warning ProvisioningFailed"]);
  strictEqual(
    w.record.events[1]?.message,
    `PersistentVolume ${PV_NAME} was refused by the API server (422 Invalid) at metadata.labels: ` +
      'PersistentVolume "x" is invalid: metadata.labels: Invalid value: "-bad-". ' +
      `The volume vol-${PV_NAME} is deleted and the claim retried`,
  );
  strictEqual(w.record.failed, 1);
  deepStrictEqual(w.journal.log, [`record ${PV_NAME}`, `clear ${PV_NAME} volume_deleted`]);
  w.close();
});

Deno.test("a 409 for a PV with another volume handle: our volume deleted, a Warning names both", async () => {
  const w = world();
  w.pvCreateAnswer({ kind: "exists", existing: pvHolding(PV_NAME, "someone-elses") });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  strictEqual(
    w.record.events[1]?.message,
    `PersistentVolume ${PV_NAME} already exists with volume someone-elses of driver ${DRIVER}, ` +
      `not volume vol-${PV_NAME} that this node created for the claim. ` +
      `The volume vol-${PV_NAME} is deleted`,
  );
  strictEqual(w.record.events[1]?.type, "Warning");
  deepStrictEqual(w.journal.entries(), []);
  w.close();
});

Deno.test("a 409 for a PV with our volume handle counts as saved", async () => {
  const w = world();
  w.pvCreateAnswer({ kind: "exists", existing: pvHolding(PV_NAME, `vol-${PV_NAME}`) });
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.deleted.length, 0);
  ok(reasons(w.record.events).includes("Normal ProvisioningSucceeded"));
  deepStrictEqual(w.journal.log.at(-1), `clear ${PV_NAME} pv_saved`);
  w.close();
});

Deno.test("a 409 for our volume handle on another node's PV (IDs made from names): ours deleted, a Warning says where", async () => {
  const w = world();
  w.pvCreateAnswer({ kind: "exists", existing: pvHolding(PV_NAME, `vol-${PV_NAME}`, "node-b") });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  ok(w.record.events[1]?.message.includes(`of driver ${DRIVER} on another node, not volume`));
  deepStrictEqual(w.journal.entries(), []);
  w.close();
});

Deno.test("after a CreateVolume that timed out, a final error on a retry keeps the intent until the volume is settled", async () => {
  const full = new CsiError("/csi.v1.Controller/CreateVolume", 8, "pool full");
  const w = world({ answers: [TIMEOUT(), full] });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  await w.sync();
  strictEqual(w.journal.entries().length, 1, "the first call may still make the volume");
  w.deleteClaim();
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  deepStrictEqual(w.journal.entries(), []);
  w.close();
});

Deno.test("an intent that cannot be written: no CreateVolume, a Warning, retry", async () => {
  const w = world();
  w.journal.failRecords = new Error("ENOSPC: no space left on device");
  deepStrictEqual(await w.sync(), { kind: "retry" });
  strictEqual(w.record.created.length, 0);
  ok(w.record.events[1]?.message.includes("ENOSPC"), w.record.events[1]?.message ?? "none");
  w.close();
});

Deno.test("a final CreateVolume error that leaves no volume clears the intent; one that may have made it keeps it", async () => {
  const w = world({
    answers: [
      new CsiError("/csi.v1.Controller/CreateVolume", 3, "bad parameter"),
    ],
  });
  await w.sync();
  deepStrictEqual(w.journal.log, [`record ${PV_NAME}`, `clear ${PV_NAME} no_volume`]);
  const internal = world({
    answers: [new CsiError("/csi.v1.Controller/CreateVolume", 13, "disk went away")],
  });
  deepStrictEqual(await internal.sync(), { kind: "retry" });
  strictEqual(internal.journal.entries().length, 1);
  internal.deleteClaim();
  deepStrictEqual(await internal.sync(), { kind: "done" });
  deepStrictEqual(internal.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  w.close();
  internal.close();
});

Deno.test("a PV saved but its intent not cleared (killed in between): settled without deleting anything", async () => {
  const first = world();
  first.failPvCreate(1);
  await first.sync();
  const [intent] = first.journal.entries();
  // A new agent: the PV was saved by the one before, its claim is bound and trimmed.
  const w = world({ claims: [], intents: [intent!] });
  w.serverClaims.set(KEY, buildClaim({ spec: { volumeName: PV_NAME } }));
  w.serverPvs.set(PV_NAME, pvHolding(PV_NAME, `vol-${PV_NAME}`));
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.deleted.length, 0);
  deepStrictEqual(w.journal.log, [`clear ${PV_NAME} pv_exists`]);
  first.close();
  w.close();
});

Deno.test("an intent whose claim was deleted while the agent was down: CreateVolume again, then DeleteVolume", async () => {
  const first = world({ answers: [TIMEOUT()] });
  await first.sync();
  const [intent] = first.journal.entries();
  strictEqual(JSON.stringify(intent).includes("s3cret"), false, "no secret data in an intent");
  const w = world({ claims: [], intents: [intent!] });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created.map((request) => request.name), [PV_NAME]);
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  deepStrictEqual(w.journal.entries(), []);
  first.close();
  w.close();
});
