/**
 * Helpers of the explain tests: the compiled binary's `explain` run as a user
 * would run it, and the agent Pod objects explain looks for (no kubelet runs
 * them: the test sets their Ready condition through the status subresource).
 */
import type { V1ClusterRole, V1Pod } from "@kubernetes/client-node";
import { load } from "js-yaml";
import type { IdentityRef } from "../cluster/identity.ts";
import { type CommandResult, runCapturing } from "../cluster/process.ts";
import { oursBinary } from "../cluster/agents.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { mergePatch } from "./support.ts";

/** What the binary printed and its exit code. */
export interface ExplainRun extends CommandResult {
  /** The first line of stdout. */
  verdict: string;
}

/** Runs `csi-node-provisioner explain ARGS` with only the given environment. */
export async function runExplain(
  args: string[],
  env: Record<string, string> = {},
): Promise<ExplainRun> {
  const run = await runCapturing(oursBinary(), ["explain", ...args], {
    PATH: Deno.env.get("PATH") ?? "",
    ...env,
  });
  return { ...run, verdict: run.stdout.split("\n")[0] ?? "" };
}

/** The agent Pod of deploy/'s DaemonSet on a node (labels, node, the agent container's flags). */
export function agentPodObject(node: string, args: readonly string[]): V1Pod {
  return {
    metadata: {
      name: `csi-node-provisioner-${node}`,
      labels: { "app.kubernetes.io/name": "csi-node-provisioner" },
    },
    spec: {
      nodeName: node,
      automountServiceAccountToken: false,
      tolerations: [{ operator: "Exists" }],
      containers: [{
        name: "csi-node-provisioner",
        image: "csi-node-provisioner",
        args: ["--csi-address=/csi/csi.sock", "--node-deployment", ...args],
      }],
    },
  };
}

/** Creates the agent Pod on the node and sets its Ready condition. */
export async function createAgentPod(
  cluster: RunningCluster,
  options: { node: string; ready: boolean; args: readonly string[] },
): Promise<string> {
  const namespace = cluster.agentNamespace;
  const pod = await cluster.admin.core.createNamespacedPod({
    namespace,
    body: agentPodObject(options.node, options.args),
  });
  const name = pod.metadata?.name ?? "";
  const status = options.ready ? "True" : "False";
  const now = new Date().toISOString();
  await cluster.admin.core.patchNamespacedPodStatus({
    namespace,
    name,
    body: {
      status: {
        phase: "Running",
        conditions: [
          { type: "PodScheduled", status: "True", lastTransitionTime: now },
          {
            type: "Ready",
            status,
            lastTransitionTime: now,
            ...(options.ready ? {} : {
              reason: "ContainersNotReady",
              message: "containers with unready status: [csi-node-provisioner]",
            }),
          },
        ],
      },
    },
  }, mergePatch);
  return name;
}

/** Waits until each node's agent has published capacity for the class. */
export async function waitForCapacities(
  cluster: RunningCluster,
  className: string,
  nodes: readonly string[],
): Promise<void> {
  await waitFor(async () => {
    const list = await cluster.admin.storage.listCSIStorageCapacityForAllNamespaces();
    const managers = new Set(
      list.items.filter((object) => object.storageClassName === className)
        .map((object) => object.metadata?.labels?.["csi.storage.k8s.io/managed-by"]),
    );
    return nodes.every((node) => managers.has(`external-provisioner-${node}`));
  }, { description: `capacity of ${className} from ${nodes.join(", ")}`, timeoutMs: 30_000 });
}

/** A kubeconfig (JSON) for the cluster's API server with a bearer token. */
export function tokenKubeconfig(cluster: RunningCluster, token: string): string {
  return JSON.stringify({
    "current-context": "c",
    contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
    clusters: [{
      name: "k",
      cluster: { server: cluster.server, "certificate-authority-data": btoa(cluster.caPem) },
    }],
    users: [{ name: "u", user: { token } }],
  });
}

/** docs/explain.md's ClusterRole for explain's users (the yaml block after its explain:rbac marker). */
export async function documentedExplainRole(): Promise<V1ClusterRole> {
  const doc = await Deno.readTextFile(new URL("../../docs/explain.md", import.meta.url));
  const marker = doc.indexOf("<!-- explain:rbac");
  if (marker < 0) throw new Error("docs/explain.md has no explain:rbac marker");
  const block = /```yaml\n([\s\S]*?)```/.exec(doc.slice(marker));
  if (block === null) throw new Error("no yaml block follows the explain:rbac marker");
  return load(block[1] ?? "") as V1ClusterRole;
}

/** Creates docs/explain.md's ClusterRole and binds it to the ServiceAccount. */
export async function grantDocumentedExplainRole(
  cluster: RunningCluster,
  identity: IdentityRef,
): Promise<void> {
  const role = await documentedExplainRole();
  await cluster.admin.rbac.createClusterRole({ body: role });
  await cluster.admin.rbac.createClusterRoleBinding({
    body: {
      metadata: { name: `${role.metadata?.name}-${identity.serviceAccount}` },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: role.metadata?.name ?? "",
      },
      subjects: [{
        kind: "ServiceAccount",
        name: identity.serviceAccount,
        namespace: identity.namespace,
      }],
    },
  });
}
