import { deepStrictEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { auditCall, auditFlags, auditPolicy, readAuditEvents } from "./audit.ts";

Deno.test("auditPolicy logs Metadata for the given users and nothing for others", () => {
  const policy = auditPolicy({ users: ["system:serviceaccount:ns:sa"] });
  ok(policy.includes('users: ["system:serviceaccount:ns:sa"]'), policy);
  ok(policy.includes("level: Metadata") && policy.trimEnd().endsWith("- level: None"), policy);
  ok(auditPolicy({}).includes('userGroups: ["system:serviceaccounts"]'));
});

Deno.test("auditFlags writes the policy; readAuditEvents reads the JSON lines", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "logs"));
    const { args, logPath } = await auditFlags(dir, {});
    ok(args.includes(`--audit-log-path=${logPath}`));
    ok(args.some((arg) => arg.startsWith("--audit-policy-file=")));
    deepStrictEqual(await readAuditEvents(logPath), []);
    const line = JSON.stringify({
      stage: "ResponseComplete",
      verb: "patch",
      requestURI: "/api/v1/persistentvolumes/pv-1",
      user: { username: "u" },
      objectRef: { resource: "persistentvolumes", apiGroup: "" },
    });
    await Deno.writeTextFile(logPath, `${line}\n`);
    const events = await readAuditEvents(logPath);
    deepStrictEqual(events.map(auditCall), ["patch persistentvolumes"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
