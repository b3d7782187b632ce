/**
 * Helpers for integration tests of the agent on tests/cluster: claims with a
 * node already selected (as the scheduler leaves them), the Events a user
 * sees on a claim, and the agents started with the flags a test wants.
 */
import {
  type CoreV1Event,
  PatchStrategy,
  setHeaderOptions,
  type V1PersistentVolumeClaim,
} from "@kubernetes/client-node";
import type { AgentRbac } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import { waitFor } from "../cluster/wait.ts";
import { ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER } from "../../lib/model/keys.ts";

/** Options that make a client-node patch call send a JSON merge patch. */
export const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/** A claim as the scheduler leaves it for a WaitForFirstConsumer class: node selected. */
export function selectedClaim(
  name: string,
  options: {
    node: string;
    storageClass: string;
    size?: string;
    driverName: string;
    spec?: Partial<NonNullable<V1PersistentVolumeClaim["spec"]>>;
    annotations?: Record<string, string>;
  },
): V1PersistentVolumeClaim {
  return {
    metadata: {
      name,
      annotations: {
        [ANN_SELECTED_NODE]: options.node,
        [ANN_STORAGE_PROVISIONER]: options.driverName,
        ...options.annotations,
      },
    },
    spec: {
      accessModes: ["ReadWriteOnce"],
      storageClassName: options.storageClass,
      resources: { requests: { storage: options.size ?? "1Gi" } },
      ...options.spec,
    },
  };
}

/** Events whose involved object is the named claim. */
export async function claimEvents(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
): Promise<CoreV1Event[]> {
  const list = await cluster.admin.core.listNamespacedEvent({
    namespace: ref.namespace,
    fieldSelector: `involvedObject.kind=PersistentVolumeClaim,involvedObject.name=${ref.name}`,
  });
  return list.items;
}

/** Waits for an event on the claim matching `reason` (and, if given, a message test). */
export async function waitForClaimEvent(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
  match: { reason: string; message?: (message: string) => boolean; timeoutMs?: number },
): Promise<CoreV1Event> {
  return await waitFor(async () => {
    const events = await claimEvents(cluster, ref);
    return events.find((event) =>
      event.reason === match.reason &&
      (match.message === undefined || match.message(event.message ?? ""))
    );
  }, {
    description: `event ${match.reason} on ${ref.namespace}/${ref.name}`,
    timeoutMs: match.timeoutMs ?? 30_000,
  });
}

/**
 * The agents' permissions when a test does not choose: cluster-admin, or
 * what TEST_AGENT_RBAC names ("upstream": upstream's rbac.yaml alone), so
 * that a whole suite can be run again under an operator's RBAC.
 */
export function defaultAgentRbac(
  env: Record<string, string | undefined> = Deno.env.toObject(),
): AgentRbac {
  const named = env.TEST_AGENT_RBAC;
  if (named === undefined || named === "") return "cluster-admin";
  if (named === "upstream" || named === "cluster-admin" || named === "none") return named;
  throw new Error(`TEST_AGENT_RBAC=${named}: expected upstream, cluster-admin or none`);
}

/**
 * Starts this project's agent on each node with its own metrics port (and
 * defaultAgentRbac()'s rights unless `rbac` says otherwise); resolves to the
 * agents' URLs once each answers /readyz.
 */
export async function startOurAgents(
  cluster: RunningCluster,
  options: {
    args?: string[];
    nodes?: string[];
    rbac?: AgentRbac;
    env?: Record<string, string>;
    /** The API server the agents' kubeconfig names, e.g. a stalling proxy's url. */
    apiServer?: string;
  } = {},
): Promise<Map<string, string>> {
  const urls = new Map<string, string>();
  for (const node of options.nodes ?? cluster.nodes.map((candidate) => candidate.name)) {
    const port = freeLoopbackPort();
    await cluster.startAgent(node, {
      kind: "ours",
      rbac: options.rbac ?? defaultAgentRbac(),
      args: [`--http-endpoint=127.0.0.1:${port}`, ...(options.args ?? [])],
      ...(options.env ? { env: options.env } : {}),
      ...(options.apiServer ? { apiServer: options.apiServer } : {}),
    });
    urls.set(node, `http://127.0.0.1:${port}`);
  }
  await Promise.all([...urls.values()].map((url) => waitForReady(url)));
  return urls;
}

/** A WaitForFirstConsumer class of the cluster's driver on its "fast" pool, reclaim Delete. */
export async function createFastClass(cluster: RunningCluster, name: string): Promise<void> {
  await cluster.admin.storage.createStorageClass({
    body: {
      metadata: { name },
      provisioner: cluster.driverName,
      parameters: { kind: "fast" },
      reclaimPolicy: "Delete",
      volumeBindingMode: "WaitForFirstConsumer",
    },
  });
}

/** Waits until the agent's /readyz answers 200 (CSI handshake done, informers synced). */
export async function waitForReady(url: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(async () => {
    const response = await fetch(`${url}/readyz`);
    await response.body?.cancel();
    return response.status === 200;
  }, { description: `${url}/readyz`, timeoutMs });
}

/** The text of an agent's /metrics. */
export async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  return await response.text();
}

export { step } from "../cluster/steps.ts";

/**
 * Events a provisioner of the cluster's driver wrote on the claim, ours or
 * upstream's (`<driver>_<host>[_<uuid>]`, and upstream's `external-provisioner`
 * for populator notices), leaving out the PV controller's and the scheduler's.
 */
export async function agentEvents(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
): Promise<CoreV1Event[]> {
  const events = await claimEvents(cluster, ref);
  return events.filter((event) => {
    const component = event.source?.component ?? event.reportingComponent ?? "";
    return component.startsWith(`${cluster.driverName}_`) || component === "external-provisioner";
  });
}

type DriverCall = import("../cluster/cluster_node.ts").DriverCall;

/**
 * The CreateVolume calls a node's driver got for the claim (volume name
 * `pvc-<uid>`): the test driver's own record, or the recording proxy's.
 */
export async function createVolumeCallsFor(
  node: { calls(method?: string): Promise<DriverCall[]> },
  claimUid: string,
): Promise<DriverCall[]> {
  const calls = await node.calls("CreateVolume");
  return calls.filter((call) => (call.request as { name?: string }).name === `pvc-${claimUid}`);
}

/** The PVs bound or pre-bound to the claim with this UID. */
export async function claimVolumes(
  cluster: RunningCluster,
  claimUid: string,
): Promise<import("@kubernetes/client-node").V1PersistentVolume[]> {
  const list = await cluster.admin.core.listPersistentVolume();
  return list.items.filter((pv) =>
    pv.spec?.claimRef?.uid === claimUid || pv.metadata?.name === `pvc-${claimUid}`
  );
}
