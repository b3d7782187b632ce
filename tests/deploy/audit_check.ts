/**
 * Granted versus used: the RBAC rules of deploy/rbac.yaml against the API
 * calls the apiserver's audit log recorded for the agent's ServiceAccount.
 */

import type { AuditEvent } from "../cluster/audit.ts";
import type { CommentedRule } from "./render.ts";

/** One verb on one resource, e.g. `patch persistentvolumeclaims` or `list storage.k8s.io/storageclasses`. */
export type Call = string;

export function callName(call: { apiGroup: string; resource: string; verb: string }): Call {
  return `${call.verb} ${call.apiGroup ? `${call.apiGroup}/` : ""}${call.resource}`;
}

/** What one granted verb was used for. */
export interface GrantRow {
  role: CommentedRule["role"];
  call: Call;
  /** Requests the agent made with it. */
  used: number;
  conditional: boolean;
  comment: string;
}

/** The audit's verdict. */
export interface AuditVerdict {
  rows: GrantRow[];
  /** Granted, used by every agent (no "Needed only" comment), and not used. */
  unusedUnconditional: GrantRow[];
  /** Requests the API server refused (401/403): a missing permission. */
  refused: AuditEvent[];
  /** Resource requests that no rule grants (they must have been refused). */
  ungranted: Call[];
  /** Every request by the agent, counted by call. */
  calls: Map<Call, number>;
  /** The same requests by call and response code, e.g. "200×2 404×1". */
  answers: Map<Call, string>;
}

/** The call an event is, e.g. `patch persistentvolumes`; discovery GETs by path. */
/** The call an audit event records, e.g. `patch persistentvolumeclaims`. */
export function callOf(event: AuditEvent): Call {
  const ref = event.objectRef;
  return ref?.resource === undefined
    ? `${event.verb} ${event.requestURI.split("?")[0]}`
    : callName({
      verb: event.verb,
      apiGroup: ref.apiGroup ?? "",
      resource: ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource,
    });
}

function completed(events: AuditEvent[], user: string): AuditEvent[] {
  return events.filter((event) =>
    event.user.username === user && event.stage !== "ResponseStarted"
  );
}

/** Audited requests of `user` that completed, counted by call. */
export function countCalls(events: AuditEvent[], user: string): Map<Call, number> {
  const counts = new Map<Call, number>();
  for (const event of completed(events, user)) {
    counts.set(callOf(event), (counts.get(callOf(event)) ?? 0) + 1);
  }
  return counts;
}

/** Response codes by call, e.g. "200×2 404×1". */
function answersByCall(events: AuditEvent[], user: string): Map<Call, string> {
  const codes = new Map<Call, Map<number, number>>();
  for (const event of completed(events, user)) {
    const byCode = codes.get(callOf(event)) ?? new Map<number, number>();
    const code = event.responseStatus?.code ?? 0;
    byCode.set(code, (byCode.get(code) ?? 0) + 1);
    codes.set(callOf(event), byCode);
  }
  return new Map(
    [...codes].map((
      [call, byCode],
    ) => [call, [...byCode].sort().map(([code, n]) => `${code}×${n}`).join(" ")]),
  );
}

/** Watches are long requests: a watch still open when the log is read has only ResponseStarted. */
function countOpenWatches(events: AuditEvent[], user: string, counts: Map<Call, number>): void {
  for (const event of events) {
    const ref = event.objectRef;
    if (event.user.username !== user || event.stage !== "ResponseStarted" || !ref?.resource) {
      continue;
    }
    const call = callName({
      verb: event.verb,
      apiGroup: ref.apiGroup ?? "",
      resource: ref.resource,
    });
    if (!counts.has(call)) counts.set(call, 1);
  }
}

export function auditVerdict(
  rules: CommentedRule[],
  options: { events: AuditEvent[]; user: string },
): AuditVerdict {
  const calls = countCalls(options.events, options.user);
  countOpenWatches(options.events, options.user, calls);
  const rows: GrantRow[] = rules.flatMap((rule) =>
    rule.resources.flatMap((resource) =>
      rule.apiGroups.flatMap((apiGroup) =>
        rule.verbs.map((verb) => {
          const call = callName({ apiGroup, resource, verb });
          return {
            role: rule.role,
            call,
            used: calls.get(call) ?? 0,
            conditional: rule.conditional,
            comment: rule.comment,
          };
        })
      )
    )
  );
  const granted = new Set(rows.map((row) => row.call));
  const refused = options.events.filter((event) =>
    event.user.username === options.user &&
    (event.responseStatus?.code === 401 || event.responseStatus?.code === 403)
  );
  return {
    rows,
    unusedUnconditional: rows.filter((row) => row.used === 0 && !row.conditional),
    refused,
    ungranted: [...calls.keys()].filter((call) => !call.includes(" /") && !granted.has(call)),
    calls,
    answers: answersByCall(options.events, options.user),
  };
}

/** A fixed-width table of the verdict, for the test's output and the report. */
export function verdictTable(verdict: AuditVerdict): string {
  const lines = verdict.rows.map((row) =>
    `${row.role.padEnd(12)} ${row.call.padEnd(44)} ${String(row.used).padStart(5)}  ${
      row.used > 0
        ? `used  ${verdict.answers.get(row.call) ?? "(watch still open)"}`
        : row.conditional
        ? "unused: Needed only ..."
        : "UNUSED"
    }`
  );
  const extra = [...verdict.calls.entries()].filter(([call]) => call.includes(" /"))
    .map(([call, count]) =>
      `${"(discovery)".padEnd(12)} ${call.padEnd(44)} ${String(count).padStart(5)}  ${
        verdict.answers.get(call) ?? ""
      }`
    );
  return [`${"role".padEnd(12)} ${"granted call".padEnd(44)} ${"calls".padStart(5)}`, ...lines]
    .concat(extra).join("\n");
}
