/**
 * deploy/'s RBAC, proven on a real API server: `kubectl kustomize deploy` is
 * applied as is to tests/cluster (Namespace, ServiceAccount, roles and
 * bindings, DaemonSet, CSIDriver, classes; the DaemonSet controller makes
 * the pods, which no kubelet runs), and the compiled agent runs on each node
 * with the DaemonSet's flags, its ServiceAccount's token and POD_NAME naming
 * the DaemonSet's pod there. The Node owns the capacity objects
 * (--capacity-owner-node, deploy/'s choice).
 *
 * The whole lifecycle (rbac_lifecycle.ts) must pass with nothing but those
 * permissions: capacity published, a class added and removed (capacity
 * created and deleted), a claim with a VolumeAttributesClass provisioned and
 * bound, a claim sent back to the scheduler after a ResourceExhausted
 * (selected-node removed) and then provisioned, a snapshot of a claim
 * restored and the claim cloned (and a restore placed on the other node
 * explained), a claim deleted while its CreateVolume timed out (read again,
 * its volume deleted), a claim of an Immediate class raced for
 * (selected-node patched by the node with room), and the volumes deleted
 * (the clone's source losing its cloning-protection finalizer). The driver
 * is deploy/'s, the upstream hostpath driver, with --enable-attach and
 * --enable-controller-modify-volume (PUBLISH_UNPUBLISH_VOLUME and
 * MODIFY_VOLUME), so the agent also reads VolumeAttributesClasses and
 * watches VolumeAttachments; its full pool and its timeouts are real (a
 * volume made behind the agents' back, a frozen driver).
 * deploy/components/node-confinement is applied too, each agent's token
 * bound to its DaemonSet pod, so the policy sees every one of those writes.
 * kube-apiserver's audit log then shows no refused request, every verb
 * granted without a "Needed only" comment was used, and so were the
 * conditional ones this lifecycle needs.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { readAuditEvents } from "../cluster/audit.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { type AuditVerdict, auditVerdict, verdictTable } from "../deploy/audit_check.ts";
import { commentedRules, RBAC_FILE } from "../deploy/render.ts";
import { deployedCluster, lifecycle, startAgents } from "./rbac_lifecycle.ts";

/** "Needed only" grants that this lifecycle needs: used, they are shown to be the right ones. */
const CONDITIONAL_CALLS_USED = [
  "patch persistentvolumeclaims",
  "get persistentvolumeclaims",
  "list snapshot.storage.k8s.io/volumesnapshots",
  "watch snapshot.storage.k8s.io/volumesnapshots",
  "get snapshot.storage.k8s.io/volumesnapshots",
  "patch snapshot.storage.k8s.io/volumesnapshots",
  "get snapshot.storage.k8s.io/volumesnapshotcontents",
  "get storage.k8s.io/volumeattributesclasses",
  "list storage.k8s.io/volumeattachments",
  "watch storage.k8s.io/volumeattachments",
  "patch events",
];

/** The audit log read against deploy/rbac.yaml, printed as a table. */
async function readVerdict(cluster: RunningCluster, user: string): Promise<AuditVerdict> {
  const events = await readAuditEvents(cluster.auditLogPath!);
  const rules = commentedRules(await Deno.readTextFile(RBAC_FILE));
  const verdict = auditVerdict(rules, { events, user });
  console.log(`\nAPI calls of ${user} (audit log):\n${verdictTable(verdict)}\n`);
  return verdict;
}

Deno.test("deploy/'s RBAC is enough for the whole lifecycle, and every unconditional grant is used", async () => {
  // With the node confinement on: it narrows what the agents may write, never what they need.
  const { cluster, objects, user } = await deployedCluster(undefined, { nodePolicy: true });
  try {
    await startAgents(cluster, objects);
    await lifecycle(cluster, { attributesClass: true });
    // A stopped agent has closed its watches: their audit events are complete.
    for (const node of cluster.nodes) strictEqual((await node.agent!.stop()).code, 0);
    const verdict = await readVerdict(cluster, user);
    deepStrictEqual(verdict.refused.map((event) => `${event.verb} ${event.requestURI}`), []);
    deepStrictEqual(verdict.ungranted, []);
    deepStrictEqual(verdict.unusedUnconditional.map((row) => row.call), []);
    for (const call of CONDITIONAL_CALLS_USED) ok(verdict.calls.get(call), `${call} was used`);
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    // A refused call in the table is the missing permission.
    const verdict = await readVerdict(cluster, user).catch(() => undefined);
    for (const event of verdict?.refused ?? []) {
      console.error(`refused: ${event.verb} ${event.requestURI} (${event.responseStatus?.code})`);
    }
    throw error;
  } finally {
    await cluster.stop();
  }
});
