/**
 * Upstream's rbac.yaml alone, proven on the same lifecycle as deploy/'s
 * RBAC (rbac_lifecycle.ts): deploy/ applied with upstream
 * external-provisioner's ClusterRole and Role rules (deploy/kubernetes/rbac.yaml
 * of the pinned module) in place of its own, as an operator who swaps the
 * sidecar in a driver's DaemonSet and keeps the driver's RBAC has it. Every
 * path works; the only refused requests are the first patch of a claim and
 * of a VolumeSnapshot per agent, after which the agent writes them with an
 * update of the object just read, as upstream does. No claim names a
 * VolumeAttributesClass: upstream's rules grant no read of them (neither
 * does upstream's sidecar work with one under them).
 */

import type { V1PolicyRule } from "@kubernetes/client-node";
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { readAuditEvents } from "../cluster/audit.ts";
import { loadUpstreamRbac, UPSTREAM_PATCH_FALLBACKS } from "../cluster/rbac.ts";
import { auditVerdict, callOf, verdictTable } from "../deploy/audit_check.ts";
import { commentedRules, type PolicyRule } from "../deploy/render.ts";
import { deployedCluster, lifecycle, startAgents } from "./rbac_lifecycle.ts";

function policyRules(rules: V1PolicyRule[] | undefined): PolicyRule[] {
  return (rules ?? []).map((rule) => ({
    apiGroups: rule.apiGroups ?? [],
    resources: rule.resources ?? [],
    verbs: rule.verbs,
  }));
}

Deno.test("upstream's rbac.yaml alone is enough for the whole lifecycle: patch refused once per agent, then update", async () => {
  const upstream = await loadUpstreamRbac();
  const { cluster, objects, user } = await deployedCluster({
    clusterRole: policyRules(upstream.clusterRole.rules),
    role: policyRules(upstream.role.rules),
  });
  try {
    await startAgents(cluster, objects);
    await lifecycle(cluster, { attributesClass: false });
    for (const node of cluster.nodes) strictEqual((await node.agent!.stop()).code, 0);
    const events = await readAuditEvents(cluster.auditLogPath!);
    const verdict = auditVerdict(commentedRules(upstream.text), { events, user });
    console.log(`\nAPI calls of ${user} under upstream's rbac.yaml:\n${verdictTable(verdict)}\n`);
    const refused = new Map<string, number>();
    for (const event of verdict.refused) {
      refused.set(callOf(event), (refused.get(callOf(event)) ?? 0) + 1);
    }
    console.log(`refused: ${[...refused].map(([call, n]) => `${call} ×${n}`).join(", ")}\n`);
    deepStrictEqual([...refused.keys()].filter((call) => !UPSTREAM_PATCH_FALLBACKS.has(call)), []);
    for (const [call, count] of refused) {
      ok(count <= cluster.nodes.length, `${call} refused ${count} times: at most once per agent`);
    }
    for (const [patch, update] of UPSTREAM_PATCH_FALLBACKS) {
      ok(refused.has(patch), `${patch} was tried (and refused)`);
      ok(verdict.calls.get(update), `${update} was used instead`);
    }
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  } finally {
    await cluster.stop();
  }
});
