/**
 * kube-apiserver's priority and fairness turned against one agent, for real:
 * a FlowSchema matching the agent's ServiceAccount sends it to a priority
 * level of the fewest seats kube-apiserver allows (one: a level of no
 * nominal shares still gets one) that rejects what does not fit, and
 * occupySeat keeps that seat busy with one large read after another as the
 * agent: most requests the agent sends meanwhile are answered 429 with
 * Retry-After.
 */
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { kubeconfigToken, tokenFetch } from "../cluster/token_fetch.ts";
import { waitFor } from "../cluster/wait.ts";

export const NAME = "refuse-the-agent";

/** A priority level with no seats of its own and none to borrow: one seat, the rest rejected. */
export const PRIORITY_LEVEL = {
  apiVersion: "flowcontrol.apiserver.k8s.io/v1",
  kind: "PriorityLevelConfiguration",
  metadata: { name: NAME },
  spec: {
    type: "Limited",
    limited: {
      nominalConcurrencyShares: 0,
      lendablePercent: 0,
      borrowingLimitPercent: 0,
      limitResponse: { type: "Reject" },
    },
  },
};

export function flowSchema(serviceAccount: { namespace: string; name: string }): object {
  return {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name: NAME },
    spec: {
      priorityLevelConfiguration: { name: NAME },
      matchingPrecedence: 100,
      distinguisherMethod: { type: "ByUser" },
      rules: [{
        subjects: [{ kind: "ServiceAccount", serviceAccount }],
        resourceRules: [{
          verbs: ["*"],
          apiGroups: ["*"],
          resources: ["*"],
          clusterScope: true,
          namespaces: ["*"],
        }],
        nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      }],
    },
  };
}

/** GETs `path` as the identity of the kubeconfig; resolves to the status and the body. */
export async function getAs(
  cluster: RunningCluster,
  kubeconfigPath: string,
  path: string,
): Promise<{ status: number; body: string }> {
  const http = tokenFetch(cluster.caPem, await kubeconfigToken(kubeconfigPath));
  try {
    const response = await http.get(cluster.server, path);
    return { status: response.status, body: await response.text() };
  } finally {
    http.close();
  }
}

/**
 * One read after another as the agent's identity, until `signal` aborts: its
 * one seat is mostly taken. Resolves to the reads made and how many of them
 * were refused themselves (the agent held the seat).
 */
export async function occupySeat(
  cluster: RunningCluster,
  options: { kubeconfigPath: string; signal: AbortSignal },
): Promise<{ reads: number; refused: number }> {
  let reads = 0;
  let refused = 0;
  while (!options.signal.aborted) {
    const read = await getAs(cluster, options.kubeconfigPath, "/openapi/v2");
    reads++;
    if (read.status === 429) refused++;
  }
  return { reads, refused };
}

/** The agent of a node held to one seat: its identity's kubeconfig, and how to lift the limit. */
export interface Throttled {
  kubeconfigPath: string;
  lift(): Promise<void>;
}

/**
 * Creates the priority level and the flow schema for the node's agent and
 * waits until kube-apiserver refuses its concurrent requests.
 */
export async function throttleAgent(cluster: RunningCluster, nodeName: string): Promise<Throttled> {
  const serviceAccount = { namespace: cluster.agentNamespace, name: `csi-provisioner-${nodeName}` };
  const kubeconfigPath = await cluster.identity({
    namespace: serviceAccount.namespace,
    serviceAccount: serviceAccount.name,
  });
  await cluster.admin.objects.create(PRIORITY_LEVEL);
  await cluster.admin.objects.create(flowSchema(serviceAccount));
  await waitFor(async () => {
    const probes = Array.from({ length: 10 }, () => getAs(cluster, kubeconfigPath, "/api"));
    return (await Promise.all(probes)).some((probe) => probe.status === 429);
  }, {
    description: "kube-apiserver refusing the agent's concurrent requests",
    timeoutMs: 30_000,
  });
  return {
    kubeconfigPath,
    lift: async () => {
      await cluster.admin.objects.delete(flowSchema(serviceAccount));
      await cluster.admin.objects.delete(PRIORITY_LEVEL);
    },
  };
}
