/**
 * The agent of a node: its pod (the DaemonSet's, found by label and
 * spec.nodeName), whether it is ready, and the flags it runs with, parsed by
 * the agent's own flag parser so that the decisions explain replays use the
 * same options the agent does.
 */
import { parseConfig } from "../../config/config.ts";
import type { Config } from "../../config/types.ts";
import type { PodInfo } from "../snapshot.ts";

/** A node's agent as explain sees it. */
export interface AgentState {
  node: string;
  /** The pod explain judges by: a ready one if any, else the newest-named. */
  pod: PodInfo | undefined;
  ready: boolean;
  /** "ready", "not ready (…)", "no agent pod on node-a". */
  text: string;
}

/** The agent pods on the node, and whether one of them is ready. */
export function agentOnNode(pods: readonly PodInfo[], node: string): AgentState {
  const onNode = pods.filter((pod) => pod.nodeName === node)
    .sort((a, b) => a.name.localeCompare(b.name));
  if (onNode.length === 0) {
    return { node, pod: undefined, ready: false, text: `no agent pod runs on node ${node}` };
  }
  const ready = onNode.find(isReady);
  if (ready !== undefined) {
    return { node, pod: ready, ready: true, text: `agent pod ${podName(ready)} is ready` };
  }
  const pod = onNode[onNode.length - 1] as PodInfo;
  return { node, pod, ready: false, text: `agent pod ${podName(pod)} is not ready (${why(pod)})` };
}

function isReady(pod: PodInfo): boolean {
  return pod.deletionTimestamp === undefined && pod.ready?.status === "True";
}

function why(pod: PodInfo): string {
  if (pod.deletionTimestamp !== undefined) return "terminating";
  const condition = pod.ready;
  if (condition === undefined) return `phase ${pod.phase}, no Ready condition`;
  const detail = [condition.reason, condition.message].filter((part) => part).join(": ");
  return detail === "" ? `phase ${pod.phase}, Ready=${condition.status}` : detail;
}

function podName(pod: PodInfo): string {
  return `${pod.namespace}/${pod.name}`;
}

/**
 * The agent's configuration from its pod's flags (NODE_NAME is the node);
 * the defaults of `--node-deployment` when there is no pod or its flags do
 * not parse, with `source` saying which.
 */
export function agentConfig(
  pod: PodInfo | undefined,
  node: string,
): { config: Config; source: "pod" | "defaults" } {
  // The parser requires NODE_NAME; with no node known (no agent pod, none selected) any valid name
  // parses, and the config keeps "" (the decision is replayed for any node).
  const nodeName = node === "" ? "any-node" : node;
  const env = { NODE_NAME: nodeName, NAMESPACE: pod?.namespace ?? "", POD_NAME: pod?.name ?? "" };
  if (pod !== undefined) {
    const parsed = parseConfig(pod.agentArgs, env);
    if (parsed.kind === "run") {
      return { config: { ...parsed.config, nodeName: node }, source: "pod" };
    }
  }
  const defaults = parseConfig(["--node-deployment", "--csi-address=/csi/csi.sock"], env);
  if (defaults.kind !== "run") throw new Error("the agent's default flags do not parse");
  return { config: { ...defaults.config, nodeName: node }, source: "defaults" };
}
