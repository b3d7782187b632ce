/**
 * Settling an intent whose claim is gone: which Secret is read (the journaled
 * reference, the class's current one, never data from the journal), and what
 * each answer of the driver and the API server leads to.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { CsiError } from "../../csi/status.ts";
import { claim as buildClaim, storageClass } from "../../../tests/builders/provision.ts";
import { PV_NAME, pvHolding, world } from "../../../tests/fakes/provision_world.ts";
import type { Intent } from "./intent.ts";

function intent(overrides: Partial<Intent> = {}): Intent {
  return {
    pvName: PV_NAME,
    claim: { namespace: "apps", name: "data", uid: "old-uid" },
    className: "fast",
    provisionerSecret: { namespace: "vault", name: "creds-v1" },
    request: {
      name: PV_NAME,
      capacity_range: { required_bytes: "1073741824" },
      volume_capabilities: [],
      parameters: { kind: "fast" },
      secrets: {},
    },
    since: "2026-01-01T00:00:00.000Z",
    ...overrides,
  };
}

const secretClass = (name: string) =>
  storageClass({
    parameters: {
      "csi.storage.k8s.io/provisioner-secret-name": name,
      "csi.storage.k8s.io/provisioner-secret-namespace": "vault",
    },
  });

Deno.test("settling reads the journaled Secret reference, also when the class is gone", async () => {
  const w = world({
    claims: [],
    classes: [],
    intents: [intent()],
    secrets: { "vault/creds-v1": { token: "t1" } },
  });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.secretReads, ["vault/creds-v1"]);
  deepStrictEqual(w.record.created[0]?.secrets, { token: "t1" });
  deepStrictEqual(w.record.deleted, [{ volume_id: `vol-${PV_NAME}`, secrets: { token: "t1" } }]);
  w.close();
});

Deno.test("a journaled Secret that is gone: the class's current Secret is tried (a rotated secret)", async () => {
  const w = world({
    claims: [],
    classes: [secretClass("creds-v2")],
    intents: [intent()],
    secrets: { "vault/creds-v2": { token: "t2" } },
  });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.secretReads, ["vault/creds-v1", "vault/creds-v2"]);
  deepStrictEqual(w.record.deleted[0]?.secrets, { token: "t2" });
  w.close();
});

Deno.test("a Secret that cannot be read now (Forbidden, API away): nothing is called, the intent is kept and retried", async () => {
  const w = world({
    claims: [],
    classes: [],
    intents: [intent()],
    secretErrors: { "vault/creds-v1": 'secrets "creds-v1" is forbidden' },
  });
  deepStrictEqual((await w.sync()).kind, "retry");
  deepStrictEqual([w.record.created.length, w.record.deleted.length], [0, 0]);
  strictEqual(w.journal.entries().length, 1);
  deepStrictEqual([...w.journal.settlingKeys], [PV_NAME], "it no longer counts against the cap");
  w.close();
});

Deno.test("every Secret gone (or its namespace): the volume is deleted without secrets, a Warning on the claim if it is still there", async () => {
  const moved = buildClaim({
    metadata: {
      uid: "old-uid",
      annotations: { "volume.kubernetes.io/selected-node": "node-b" },
    },
  });
  const w = world({ claims: [moved], classes: [], intents: [intent()], secrets: {} });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.deleted, [{ volume_id: `vol-${PV_NAME}`, secrets: {} }]);
  deepStrictEqual(w.journal.log, [`clear ${PV_NAME} volume_deleted`]);
  const warning = w.record.events.find((event) => event.reason === "DeletionSecretUnavailable");
  strictEqual(warning?.subject.uid, "old-uid");
  ok(warning?.message.includes("vault/creds-v1: not found"), warning?.message);
  const gone = world({ claims: [], classes: [], intents: [intent()], secrets: {} });
  deepStrictEqual(await gone.sync(), { kind: "done" });
  strictEqual(gone.record.deleted.length, 1);
  deepStrictEqual(gone.record.events, [], "no claim to put an Event on: a log line only");
  w.close();
  gone.close();
});

Deno.test("settling: a timeout keeps the intent; a final 'no volume' answer clears it", async () => {
  const timeout = world({
    claims: [],
    intents: [intent({ provisionerSecret: null })],
    answers: [new CsiError("/csi.v1.Controller/CreateVolume", 4, "deadline")],
  });
  deepStrictEqual((await timeout.sync()).kind, "retry");
  strictEqual(timeout.journal.entries().length, 1);
  const refused = world({
    claims: [],
    intents: [intent({ provisionerSecret: null })],
    answers: [new CsiError("/csi.v1.Controller/CreateVolume", 8, "pool full")],
  });
  deepStrictEqual(await refused.sync(), { kind: "done" });
  deepStrictEqual(refused.journal.log, [`clear ${PV_NAME} no_volume`]);
  strictEqual(refused.record.deleted.length, 0);
  timeout.close();
  refused.close();
});

Deno.test("settling: another node's PV of that name with the same handle (IDs made from names) does not hide ours", async () => {
  const w = world({ claims: [], intents: [intent({ provisionerSecret: null })] });
  w.serverPvs.set(PV_NAME, pvHolding(PV_NAME, `vol-${PV_NAME}`, "node-b"));
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  deepStrictEqual(w.journal.log, [`clear ${PV_NAME} volume_deleted`]);
  w.close();
});

Deno.test("settling: this node's PV of that name exists: no CreateVolume (it could re-create a volume the delete path removed), the volume is the PV's", async () => {
  const w = world({ claims: [], intents: [intent({ provisionerSecret: null })] });
  w.serverPvs.set(PV_NAME, pvHolding(PV_NAME, "whatever-the-driver-said"));
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual([w.record.created.length, w.record.deleted.length], [0, 0]);
  deepStrictEqual(w.journal.log, [`clear ${PV_NAME} pv_exists`]);
  w.close();
});

Deno.test("settling: after a CreateVolume went to the background, a final error keeps the intent until the volume is settled", async () => {
  const w = world({
    claims: [],
    intents: [intent({ provisionerSecret: null })],
    answers: [
      new CsiError("/csi.v1.Controller/CreateVolume", 4, "deadline"),
      new CsiError("/csi.v1.Controller/CreateVolume", 8, "pool full"),
    ],
  });
  deepStrictEqual((await w.sync()).kind, "retry");
  deepStrictEqual((await w.sync()).kind, "retry", "the first call may still make the volume");
  strictEqual(w.journal.entries().length, 1);
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  deepStrictEqual(w.journal.log, [`clear ${PV_NAME} volume_deleted`]);
  w.close();
});

Deno.test("settling: a failed DeleteVolume keeps the intent for a retry", async () => {
  const w = world({ claims: [], intents: [intent({ provisionerSecret: null })] });
  w.faults.deleteVolumeFails = 1;
  deepStrictEqual((await w.sync()).kind, "retry");
  strictEqual(w.journal.entries().length, 1);
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.journal.entries(), []);
  w.close();
});
