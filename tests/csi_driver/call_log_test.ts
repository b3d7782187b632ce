import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { CallLog, STRIPPED, stripSecrets } from "./call_log.ts";

Deno.test("secret values are replaced and their keys listed, other fields untouched", () => {
  const request = {
    name: "pvc-1",
    parameters: { kind: "fast" },
    secrets: { password: "hunter2", token: "abc" },
    nested: [{ secrets: { apiKey: "k" } }],
  };
  const { request: stripped, secretKeys } = stripSecrets(request);
  deepStrictEqual(stripped, {
    name: "pvc-1",
    parameters: { kind: "fast" },
    secrets: { password: STRIPPED, token: STRIPPED },
    nested: [{ secrets: { apiKey: STRIPPED } }],
  });
  deepStrictEqual(secretKeys, ["apiKey", "password", "token"]);
  strictEqual(JSON.stringify(stripped).includes("hunter2"), false);
  strictEqual(request.secrets.password, "hunter2", "the original request is not modified");
});

Deno.test("a call is listed while running and carries its code once finished", () => {
  const log = new CallLog();
  const entry = log.begin("CreateVolume", { name: "pvc-1", secrets: {} }, new Date(0));
  deepStrictEqual(log.list()[0]?.code, null);
  log.finish(entry, { code: 8, message: "full", durationMs: 3 });
  const [listed] = log.list("CreateVolume");
  deepStrictEqual(
    [listed?.code, listed?.codeName, listed?.message, listed?.durationMs, listed?.secretKeys],
    [8, "RESOURCE_EXHAUSTED", "full", 3, []],
  );
  strictEqual(listed?.time, "1970-01-01T00:00:00.000Z");
});

Deno.test("calls filter by method and clearing keeps the sequence numbers increasing", () => {
  const log = new CallLog();
  log.begin("Probe", {}, new Date());
  log.begin("CreateVolume", {}, new Date());
  log.begin("Probe", {}, new Date());
  deepStrictEqual(log.list("Probe").map((call) => call.seq), [1, 3]);
  deepStrictEqual(log.list("DeleteVolume"), []);
  log.clear();
  deepStrictEqual(log.list(), []);
  strictEqual(log.begin("Probe", {}, new Date()).seq, 4);
});

Deno.test("the log keeps only the most recent calls up to its limit", () => {
  const log = new CallLog({ limit: 4 });
  for (let i = 0; i < 23; i++) log.begin("Probe", { i }, new Date());
  deepStrictEqual(log.list().map((call) => call.seq), [20, 21, 22, 23]);
});
