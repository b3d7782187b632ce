/** Intents: what is written (never secret data), how it is read back, and when a claim still needs it. */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { claim, claimDecisionOptions, DRIVER } from "../../../tests/builders/provision.ts";
import { intentFate, intentKey, makeIntent, parseIntent } from "./intent.ts";

const OPTIONS = claimDecisionOptions();
const REQUEST = {
  name: "pvc-1",
  capacity_range: { required_bytes: "1024" },
  volume_capabilities: [{ access_mode: { mode: "SINGLE_NODE_WRITER" as const } }],
  parameters: { kind: "fast" },
  secrets: { password: "s3cret" },
};

function intent() {
  return makeIntent(claim(), {
    className: "fast",
    provisionerSecret: { namespace: "apps", name: "creds" },
  }, { request: REQUEST, now: new Date("2026-01-01T00:00:00Z") });
}

Deno.test("an intent keeps the Secret's reference and never its data", () => {
  const made = intent();
  deepStrictEqual(made.request.secrets, {});
  strictEqual(JSON.stringify(made).includes("s3cret"), false);
  deepStrictEqual(made.provisionerSecret, { namespace: "apps", name: "creds" });
  strictEqual(intentKey(made), "apps/data");
  strictEqual(made.since, "2026-01-01T00:00:00.000Z");
});

Deno.test("parseIntent() takes back what was written and names what is wrong otherwise", () => {
  const made = intent();
  deepStrictEqual(parseIntent(JSON.parse(JSON.stringify(made))), made);
  deepStrictEqual(
    parseIntent({ ...made, request: { ...made.request, secrets: { leaked: "x" } } }),
    made,
    "secrets read back are dropped",
  );
  strictEqual(
    parseIntent({ ...made, claim: { name: "x" }, since: "yesterday" }),
    'entry "pvc-1": bad claim, since',
  );
  strictEqual(parseIntent([]), "an entry is not an object");
  ok(
    String(parseIntent({ ...made, request: { ...made.request, name: "other" } })).includes(
      "request",
    ),
  );
});

Deno.test("intentFate(): settle unless the claim is still this node's to provision", () => {
  const made = intent();
  const annotations = (node: string) => ({
    "volume.kubernetes.io/storage-provisioner": DRIVER,
    "volume.kubernetes.io/selected-node": node,
  });
  strictEqual(intentFate(made, claim(), OPTIONS), "keep");
  strictEqual(intentFate(made, undefined, OPTIONS), "settle");
  strictEqual(intentFate(made, claim({ metadata: { uid: "new" } }), OPTIONS), "settle");
  strictEqual(intentFate(made, claim({ spec: { volumeName: "pvc-1" } }), OPTIONS), "settle");
  strictEqual(
    intentFate(made, claim({ metadata: { annotations: annotations("node-b") } }), OPTIONS),
    "settle",
  );
  strictEqual(
    intentFate(made, claim({ metadata: { annotations: annotations("") } }), OPTIONS),
    "settle",
  );
  strictEqual(
    intentFate(made, claim({ metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } }), OPTIONS),
    "settle",
  );
});
