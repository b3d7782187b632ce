import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { AuditEvent } from "../cluster/audit.ts";
import { auditVerdict } from "./audit_check.ts";
import { commentedRules } from "./render.ts";

const USER = "system:serviceaccount:ns:agent";

const RBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: agent
rules:
  # Informer over PVs, and their creation.
  - apiGroups: [""]
    resources: ["persistentvolumes"]
    verbs: ["list", "watch", "create"]
  # Needed only when a class names a VolumeAttributesClass.
  - apiGroups: ["storage.k8s.io"]
    resources: ["volumeattributesclasses"]
    verbs: ["get"]
  # A commented-out rule is no rule:
  # - apiGroups: [""]
  #   resources: ["secrets"]
  #   verbs: ["get"]
`;

function event(verb: string, resource: string, options: Partial<AuditEvent> = {}): AuditEvent {
  return {
    stage: "ResponseComplete",
    verb,
    requestURI: `/api/v1/${resource}`,
    user: { username: USER },
    objectRef: { resource, apiGroup: "" },
    responseStatus: { code: 200 },
    ...options,
  };
}

Deno.test("commentedRules pairs each rule with the comment right above it", () => {
  const rules = commentedRules(RBAC);
  deepStrictEqual(rules.map((rule) => [rule.resources[0], rule.conditional]), [
    ["persistentvolumes", false],
    ["volumeattributesclasses", true],
  ]);
  strictEqual(rules[0]!.comment, "Informer over PVs, and their creation.");
});

Deno.test("auditVerdict finds unused grants, refusals and calls no rule grants", () => {
  const verdict = auditVerdict(commentedRules(RBAC), {
    user: USER,
    events: [
      event("list", "persistentvolumes"),
      // An open watch has only ResponseStarted, and counts.
      event("watch", "persistentvolumes", { stage: "ResponseStarted" }),
      event("get", "secrets", { responseStatus: { code: 403 } }),
      // Another user's calls do not count.
      event("create", "persistentvolumes", { user: { username: "admin" } }),
      // Discovery: a non-resource request.
      {
        stage: "ResponseComplete",
        verb: "get",
        requestURI: "/apis/storage.k8s.io/v1",
        user: { username: USER },
      },
    ],
  });
  deepStrictEqual(verdict.unusedUnconditional.map((row) => row.call), [
    "create persistentvolumes",
  ]);
  deepStrictEqual(verdict.refused.map((refused) => refused.verb), ["get"]);
  deepStrictEqual(verdict.ungranted, ["get secrets"]);
  strictEqual(verdict.calls.get("get /apis/storage.k8s.io/v1"), 1);
  strictEqual(verdict.rows.find((row) => row.call === "watch persistentvolumes")?.used, 1);
});
