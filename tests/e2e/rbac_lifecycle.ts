/**
 * The lifecycle the RBAC end-to-end tests run: `kubectl kustomize deploy`
 * applied as is to tests/cluster (with, optionally, other rules in its
 * ClusterRole and Role), the compiled agent on each node with the
 * DaemonSet's flags, its ServiceAccount's token and POD_NAME naming the
 * DaemonSet's pod there, and every path an agent takes: capacity, a class
 * added and removed, provisioning, restore and clone, a reschedule after
 * ResourceExhausted, an abandoned timed-out claim, the Immediate race, and
 * deletion. kube-apiserver's audit log records the agents' calls.
 */

import { ensureClusterBinaries } from "../cluster/build.ts";
import { startCluster } from "../cluster/cluster.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import {
  applyObjects,
  daemonSetPodsByNode,
  deployedIdentity,
  startDeployedAgent,
  waitAgentReady,
} from "../deploy/apply.ts";
import {
  abandonTimedOutClaim,
  addAndRemoveClass,
  capacityOf,
  checkCapacityOwners,
  CLASS,
  deleteAndWaitGone,
  provisionOn,
  racedForImmediateClaim,
  rescheduledWhenFull,
  WORKLOADS,
} from "../deploy/lifecycle_steps.ts";
import { restoreAndClone } from "../deploy/lifecycle_sources.ts";
import {
  EXAMPLE_DIR,
  type K8sObject,
  type PolicyRule,
  renderKustomize,
  theObject,
} from "../deploy/render.ts";

/** The rules deploy/'s ClusterRole and Role get instead of their own. */
export interface ReplacedRules {
  clusterRole: PolicyRule[];
  role: PolicyRule[];
}

/**
 * deploy/ rendered through the hostpath example (its CSIDriver and classes), with `rules` (when
 * given) in place of its ClusterRole's and Role's.
 */
async function deployObjects(kubectl: string, rules?: ReplacedRules): Promise<K8sObject[]> {
  const { objects } = await renderKustomize(kubectl, EXAMPLE_DIR);
  if (rules === undefined) return objects;
  return objects.map((object) => {
    if (object.kind === "ClusterRole") return { ...object, rules: rules.clusterRole };
    if (object.kind === "Role") return { ...object, rules: rules.role };
    return object;
  });
}

/**
 * A two-node cluster with deploy/ applied and the audit log of its
 * ServiceAccount on. `nodePolicy`: deploy/components/node-confinement too,
 * each agent's token bound to its DaemonSet Pod (default: CLUSTER_NODE_POLICY).
 */
export async function deployedCluster(
  rules?: ReplacedRules,
  options: { nodePolicy?: boolean } = {},
): Promise<
  { cluster: RunningCluster; objects: K8sObject[]; user: string }
> {
  const binaries = await ensureClusterBinaries();
  const objects = await deployObjects(binaries.kubectl, rules);
  const identity = deployedIdentity(objects);
  const user = `system:serviceaccount:${identity.namespace}:${identity.serviceAccount}`;
  const cluster = await startCluster({
    binaries,
    nodes: ["node-a", "node-b"],
    driverOptions: {
      capacity: { fast: "4Gi" },
      // MODIFY_VOLUME and PUBLISH_UNPUBLISH_VOLUME make the agent use two "Needed only" grants:
      // get on VolumeAttributesClasses and list/watch on VolumeAttachments.
      extraArgs: ["--enable-controller-modify-volume", "--enable-attach"],
      recordCalls: true,
    },
    // Restores: the VolumeSnapshot CRDs, snapshot-controller, csi-snapshotter per node.
    snapshots: true,
    // The example overlay declares the CSIDriver and the classes.
    csiDriver: false,
    storageClasses: false,
    agentNamespace: identity.namespace,
    auditLog: { users: [user] },
    ...(options.nodePolicy === undefined ? {} : { nodePolicy: options.nodePolicy }),
  });
  try {
    await applyObjects(cluster, objects);
    await createNamespace(cluster.admin, WORKLOADS);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return { cluster, objects, user };
}

/** The compiled agent on every node, as the DaemonSet's pod there would run it. */
export async function startAgents(cluster: RunningCluster, objects: K8sObject[]): Promise<void> {
  const pods = await daemonSetPodsByNode(cluster, theObject(objects, "DaemonSet"));
  for (const node of cluster.nodes) {
    const httpPort = freeLoopbackPort();
    const agent = await startDeployedAgent(cluster, {
      node: node.name,
      objects,
      podName: pods.get(node.name)!,
      httpPort,
    });
    await waitAgentReady(`http://127.0.0.1:${httpPort}`, { agent });
  }
}

/**
 * Every path, in order. `attributesClass`: the first claim names a
 * VolumeAttributesClass (the agent then reads it; upstream's rbac.yaml
 * grants no read of them).
 */
export async function lifecycle(
  cluster: RunningCluster,
  options: { attributesClass: boolean },
): Promise<void> {
  await checkCapacityOwners(cluster);
  await addAndRemoveClass(cluster);
  if (options.attributesClass) {
    await cluster.admin.storage.createVolumeAttributesClass({
      body: {
        metadata: { name: "rbac-gold" },
        driverName: cluster.driverName,
        parameters: { iops: "5" },
      },
    });
  }
  const first = await provisionOn(cluster, "first", {
    node: "node-a",
    ...(options.attributesClass ? { attributesClass: "rbac-gold" } : {}),
  });
  await waitFor(
    async () => String((await capacityOf(cluster, CLASS)).get("node-a")?.capacity) === "3Gi",
    { description: "node-a's published capacity down to 3Gi" },
  );
  await restoreAndClone(cluster, { source: "first", node: "node-a", other: "node-b" });
  await waitFor(
    async () => String((await capacityOf(cluster, CLASS)).get("node-a")?.capacity) === "3Gi",
    { description: "node-a's published capacity back to 3Gi" },
  );
  // node-b is full: the agent removes selected-node, the scheduler picks node-a.
  const second = await rescheduledWhenFull(cluster, "second", { full: "node-b", other: "node-a" });
  await abandonTimedOutClaim(cluster, "node-b");
  // node-a is full now (first and second): node-b owns the Immediate claim.
  const third = await racedForImmediateClaim(cluster, "third", { full: "node-a", other: "node-b" });
  const volumes = [
    { claim: "first", pv: first },
    { claim: "second", pv: second },
    { claim: "third", pv: third },
  ];
  await deleteAndWaitGone(cluster, volumes);
}
