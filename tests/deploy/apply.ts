/**
 * Putting deploy/'s objects on a tests/cluster API server, and running the
 * compiled agent there as the deployed DaemonSet would: the same flags (only
 * the socket and HTTP addresses are local), the same ServiceAccount, and
 * POD_NAME naming the DaemonSet's real pod on that node. Used by the RBAC
 * end-to-end test and the demo.
 */

import { ok } from "node:assert/strict";
import { join } from "node:path";
import type { AgentHandle } from "../cluster/agents.ts";
import type { ClusterBinaries } from "../cluster/build.ts";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { agentContainer, type K8sObject, run, theObject } from "./render.ts";

/** `kubectl apply --server-side` of the objects; with dryRun, the server only validates them. */
export async function applyObjects(
  cluster: RunningCluster,
  objects: K8sObject[],
  options: { dryRun?: boolean; fieldManager?: string } = {},
): Promise<string> {
  const list = JSON.stringify({ apiVersion: "v1", kind: "List", items: objects });
  return await run(cluster.binaries.kubectl, [
    `--kubeconfig=${cluster.kubeconfigPath}`,
    "apply",
    "--server-side",
    `--field-manager=${options.fieldManager ?? "csi-node-provisioner-tests"}`,
    ...(options.dryRun ? ["--dry-run=server"] : []),
    "-f",
    "-",
  ], { stdin: list });
}

/** A control plane alone (no nodes, no driver, no classes): for server-side dry runs. */
export function startValidationCluster(binaries: ClusterBinaries): Promise<RunningCluster> {
  return startCluster({
    binaries,
    nodes: [],
    driver: "none",
    storageClasses: false,
    log: () => {},
  });
}

/**
 * A server-side dry run of the objects, which validates every field, the
 * admission plugins and RBAC's escalation checks: fails unless the API
 * server accepted every one.
 */
export async function dryRunAccepted(cluster: RunningCluster, objects: K8sObject[]): Promise<void> {
  const output = await applyObjects(cluster, objects, { dryRun: true });
  ok(output.includes("(server dry run)"), output);
  const lines = output.trim().split("\n");
  ok(lines.length === objects.length, `${lines.length} of ${objects.length} objects:\n${output}`);
}

/** The ServiceAccount of deploy/'s DaemonSet, as tests/cluster's identity() takes it. */
export function deployedIdentity(objects: K8sObject[]): {
  namespace: string;
  serviceAccount: string;
} {
  const daemonSet = theObject(objects, "DaemonSet");
  const spec = daemonSet.spec as { template: { spec: { serviceAccountName: string } } };
  return {
    namespace: daemonSet.metadata.namespace!,
    serviceAccount: spec.template.spec.serviceAccountName,
  };
}

/**
 * The DaemonSet's agent flags for a local run: tests/cluster adds
 * --csi-address, --kubeconfig and --node-deployment itself, and the HTTP
 * server listens on a loopback port instead of the pod's.
 */
export function deployedAgentArgs(objects: K8sObject[], options: { httpPort: number }): string[] {
  const args = agentContainer(theObject(objects, "DaemonSet")).args;
  return args
    .filter((arg) => !arg.startsWith("--csi-address") && arg !== "--node-deployment")
    .map((arg) =>
      arg.startsWith("--http-endpoint=") ? `--http-endpoint=127.0.0.1:${options.httpPort}` : arg
    );
}

/** Names of the DaemonSet's pods by node, once the DaemonSet controller made one per node. */
export async function daemonSetPodsByNode(
  cluster: RunningCluster,
  daemonSet: K8sObject,
): Promise<Map<string, string>> {
  const namespace = daemonSet.metadata.namespace!;
  const selector = (daemonSet.spec as { selector: { matchLabels: Record<string, string> } })
    .selector.matchLabels;
  const labelSelector = Object.entries(selector).map(([key, value]) => `${key}=${value}`).join(",");
  return await waitFor(async () => {
    const pods = await cluster.admin.core.listNamespacedPod({ namespace, labelSelector });
    const byNode = new Map<string, string>();
    for (const pod of pods.items) {
      // The DaemonSet controller pins each pod to its node by this affinity term.
      const term = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
        ?.nodeSelectorTerms[0]?.matchFields?.[0];
      const node = pod.spec?.nodeName ?? term?.values?.[0];
      if (node) byNode.set(node, pod.metadata!.name!);
    }
    return cluster.nodes.every((node) => byNode.has(node.name)) ? byNode : undefined;
  }, {
    description: `a pod of DaemonSet ${daemonSet.metadata.name} on every node`,
    timeoutMs: 60_000,
  });
}

/** Starts the compiled agent on a node as deploy/'s DaemonSet pod there would run. */
export async function startDeployedAgent(
  cluster: RunningCluster,
  options: {
    node: string;
    objects: K8sObject[];
    /** The DaemonSet's pod on that node (POD_NAME); needed for --capacity-ownerref-level ≥ 0. */
    podName?: string;
    httpPort: number;
    extraArgs?: string[];
  },
): Promise<AgentHandle> {
  return await cluster.startAgent(options.node, {
    kind: "ours",
    identity: deployedIdentity(options.objects),
    // Nothing beyond what deploy/ granted.
    rbac: "none",
    args: [
      ...deployedAgentArgs(options.objects, { httpPort: options.httpPort }),
      ...(options.extraArgs ?? []),
    ],
    ...(options.podName ? { env: { POD_NAME: options.podName } } : {}),
  });
}

/** Waits for the agent's /readyz (CSI handshake, informers, first capacity publish). */
export async function waitAgentReady(
  url: string,
  options: {
    /** The agent's process (an AgentHandle, or a process started another way). */
    agent: Pick<AgentHandle, "running" | "logFile"> & { node?: string; name?: string };
    timeoutMs?: number;
  },
): Promise<void> {
  const outcome = await waitFor(async () => {
    if (!options.agent.running) return "exited";
    const response = await fetch(`${url}/readyz`).catch(() => undefined);
    await response?.body?.cancel();
    return response?.status === 200 ? "ready" : undefined;
  }, { description: `${url}/readyz`, timeoutMs: options.timeoutMs ?? 60_000 });
  if (outcome === "exited") {
    const log = await Deno.readTextFile(options.agent.logFile).catch(() => "");
    throw new Error(
      `the agent ${options.agent.node ? `on ${options.agent.node}` : options.agent.name} exited:\n${
        log.split("\n").slice(-20).join("\n")
      }`,
    );
  }
}

/** A file under the cluster's directory. */
export function clusterFile(cluster: RunningCluster, name: string): string {
  return join(cluster.dir, name);
}
