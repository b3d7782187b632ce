/**
 * The chaos tests' audit rule, on hand-made audit events: a PV deleted twice
 * passes only when an agent ended between the two DELETEs.
 */
import assert from "node:assert/strict";
import type { AuditEvent } from "../cluster/audit.ts";
import { pvAudit } from "./support.ts";

function call(verb: string, name: string, at: string, code = 200): AuditEvent {
  return {
    stage: "ResponseComplete",
    verb,
    requestURI: `/api/v1/persistentvolumes/${name}`,
    user: { username: "agent" },
    objectRef: { resource: "persistentvolumes", name },
    responseStatus: { code },
    requestReceivedTimestamp: at,
    stageTimestamp: at,
  };
}

const EVENTS = [
  call("create", "pv-1", "2026-12-02T10:00:00Z", 201),
  call("delete", "pv-1", "2026-12-02T10:01:00Z"),
  call("delete", "pv-1", "2026-12-02T10:01:30Z"),
];

Deno.test("pvAudit: two successful DELETEs with no agent ended between them are reported", () => {
  const later = Date.parse("2026-12-02T10:05:00Z");
  const audit = pvAudit(EVENTS, ["pv-1"], { deleted: true, endings: [later] });
  assert.deepEqual(audit.deletedTwice, ["pv-1"]);
  assert.deepEqual(audit.deletedTwiceWithoutEnding, ["pv-1"]);
});

Deno.test("pvAudit: a kill between the two DELETEs explains the second", () => {
  const between = Date.parse("2026-12-02T10:01:10Z");
  const audit = pvAudit(EVENTS, ["pv-1"], { deleted: true, endings: [between] });
  assert.deepEqual(audit.deletedTwiceWithoutEnding, []);
  assert.deepEqual(audit.notCreatedOnce, []);
  assert.deepEqual(audit.notDeleted, []);
});

Deno.test("pvAudit: one DELETE needs no kill", () => {
  const audit = pvAudit(EVENTS.slice(0, 2), ["pv-1"], { deleted: true });
  assert.deepEqual(audit.deletedTwice, []);
  assert.deepEqual(audit.deletedTwiceWithoutEnding, []);
});
