/**
 * kube-apiserver's audit log, for tests that need the truth about which API
 * calls a client made (the RBAC test: every verb the agent's role grants must
 * be used). Off by default: startCluster({ auditLog: { users } }) turns it on.
 * Requests are logged at the Metadata level (who, verb, resource, answer; no
 * bodies), once they complete (or, for watches, once the response started),
 * with the log backend's default blocking mode: a request's event is written
 * before its response is sent.
 */

import { existsSync } from "node:fs";
import { join } from "node:path";

export interface AuditLogOptions {
  /** Users whose requests are logged, e.g. system:serviceaccount:NS:NAME. Default: every ServiceAccount. */
  users?: string[];
}

/** One audit event, the fields tests read. */
export interface AuditEvent {
  stage: "ResponseStarted" | "ResponseComplete" | "Panic";
  verb: string;
  requestURI: string;
  user: { username: string };
  objectRef?: {
    resource?: string;
    subresource?: string;
    apiGroup?: string;
    namespace?: string;
    name?: string;
  };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

/** The audit policy: Metadata for the chosen users, nothing for anyone else. */
export function auditPolicy(options: AuditLogOptions): string {
  const who = options.users === undefined
    ? `    userGroups: ["system:serviceaccounts"]`
    : `    users: ${JSON.stringify(options.users)}`;
  return [
    "apiVersion: audit.k8s.io/v1",
    "kind: Policy",
    // One event per request is enough; watches still log ResponseStarted.
    'omitStages: ["RequestReceived"]',
    "rules:",
    "  - level: Metadata",
    who,
    "  - level: None",
    "",
  ].join("\n");
}

/** Writes the policy into `dir`; returns kube-apiserver's flags and the log's path. */
export async function auditFlags(
  dir: string,
  options: AuditLogOptions,
): Promise<{ args: string[]; logPath: string }> {
  const policyPath = join(dir, "audit-policy.yaml");
  const logPath = join(dir, "logs", "audit.log");
  await Deno.writeTextFile(policyPath, auditPolicy(options));
  return {
    args: [
      `--audit-policy-file=${policyPath}`,
      `--audit-log-path=${logPath}`,
      "--audit-log-format=json",
      // Never rotate: the test reads one file.
      "--audit-log-maxsize=0",
    ],
    logPath,
  };
}

/** Every event in the log (none when it was not written yet). */
export async function readAuditEvents(logPath: string): Promise<AuditEvent[]> {
  if (!existsSync(logPath)) return [];
  const text = await Deno.readTextFile(logPath);
  return text.split("\n").filter((line) => line.trim() !== "").map((line) =>
    JSON.parse(line) as AuditEvent
  );
}

/** `verb resource[/subresource]` with the API group, e.g. `patch persistentvolumes` or `list storage.k8s.io/storageclasses`. */
export function auditCall(event: AuditEvent): string {
  const ref = event.objectRef;
  if (ref?.resource === undefined) return `${event.verb} ${event.requestURI.split("?")[0]}`;
  const group = ref.apiGroup ? `${ref.apiGroup}/` : "";
  const sub = ref.subresource ? `/${ref.subresource}` : "";
  return `${event.verb} ${group}${ref.resource}${sub}`;
}
