/**
 * Settling an intent whose claim is gone: which Secret is read (the journaled
 * reference, the class's current one, never data from the journal), and what
 * each answer of the driver and the API server leads to.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { CsiError } from "../csi/status.ts";
import { storageClass } from "../../tests/builders/provision.ts";
import { PV_NAME, pvHolding, world } from "../../tests/fakes/provision_world.ts";
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

Deno.test("no readable Secret: nothing is called, the intent is kept and retried", async () => {
  const w = world({ claims: [], classes: [], intents: [intent()], secrets: {} });
  deepStrictEqual((await w.sync()).kind, "retry");
  deepStrictEqual([w.record.created.length, w.record.deleted.length], [0, 0]);
  strictEqual(w.journal.entries().length, 1);
  w.close();
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

Deno.test("settling: a PV of that name with another volume does not save ours", async () => {
  const w = world({ claims: [], intents: [intent({ provisionerSecret: null })] });
  w.serverPvs.set(PV_NAME, pvHolding(PV_NAME, "made-on-node-b"));
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
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
