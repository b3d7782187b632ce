/**
 * The facts of an explanation, derived once from the snapshot: the request,
 * the selected node, whose the class is, the capacity table, the owning
 * agent and its replayed decision, the race, the events by object.
 */
import type { Config } from "../../config/types.ts";
import { ANN_SELECTED_NODE } from "../../model/keys.ts";
import { classifyDataSource } from "../../provision/source/classify.ts";
import { requiredBytes } from "../../provision/request/size.ts";
import { agentConfig, agentOnNode, type AgentState } from "./agents.ts";
import { nodeCapacities, type NodeCapacity } from "./capacity.ts";
import { nodeSegment, replayDecision, type ReplayedDecision } from "./decision.ts";
import { type RaceStatus, raceStatus } from "./immediate.ts";
import { nodeLossLines } from "./node_loss.ts";
import type { EventInfo, ExplainSnapshot } from "../snapshot.ts";

/** Everything the verdict and the sections are made of. */
export interface Facts {
  snapshot: ExplainSnapshot;
  key: string;
  requestBytes: bigint | undefined;
  selectedNode: string;
  /** The class's provisioner, "" without a class. */
  driverName: string;
  /** False when the agents are known to serve other drivers only. */
  servedByAgents: boolean;
  bindingMode: string;
  rows: NodeCapacity[];
  /** The selected node's agent; undefined before a node is selected. */
  agent: AgentState | undefined;
  config: { config: Config; source: "pod" | "defaults"; pod: string | undefined };
  decision: ReplayedDecision | undefined;
  race: RaceStatus | undefined;
  claimEvents: EventInfo[];
  /** The provisioners' Events on the claim (source `<driver>_<node>`), oldest first. */
  agentEvents: EventInfo[];
  /** Whether the claim's node or its agent is gone, and what happens then (none when not). */
  nodeLoss: string[];
}

/** Derives the facts. */
export function gatherFacts(snapshot: ExplainSnapshot): Facts {
  const { claim, storageClass } = snapshot;
  const size = requiredBytes(claim);
  const requestBytes = size.ok ? size.value : undefined;
  const selectedNode = claim.metadata.annotations?.[ANN_SELECTED_NODE] ?? "";
  const driverName = storageClass?.provisioner ?? "";
  const agent = selectedNode === "" ? undefined : agentOnNode(snapshot.agentPods, selectedNode);
  const configPod = agent?.pod ?? snapshot.agentPods.find((pod) => pod.ready?.status === "True") ??
    snapshot.agentPods[0];
  const parsed = agentConfig(configPod, selectedNode || (configPod?.nodeName ?? ""));
  const config = { ...parsed, pod: configPod?.name };
  const rows = nodeCapacities(snapshot.capacities, {
    driverName,
    nodes: snapshot.nodes,
    requestBytes,
  });
  const claimEvents = snapshot.events.filter((event) => event.objectKind !== "Pod");
  const servedByAgents = snapshot.agentDrivers.length === 0 ||
    snapshot.agentDrivers.includes(driverName);
  const bindingMode = storageClass?.volumeBindingMode ?? "Immediate";
  const facts: Facts = {
    snapshot,
    key: `${claim.metadata.namespace}/${claim.metadata.name}`,
    requestBytes,
    selectedNode,
    driverName,
    servedByAgents,
    bindingMode,
    rows,
    agent,
    config,
    decision: undefined,
    race: undefined,
    claimEvents,
    agentEvents: claimEvents.filter((event) =>
      driverName !== "" && event.component.startsWith(`${driverName}_`)
    ),
    nodeLoss: nodeLossLines({
      selectedNode,
      volume: snapshot.volume,
      nodes: snapshot.nodes,
      leases: snapshot.leases,
      storageClass,
      withdrawAfterMs: config.config.capacityWithdrawAfterMs,
      claimEvents,
      now: snapshot.now,
    }),
  };
  if (storageClass !== undefined && servedByAgents) {
    facts.decision = replayDecision(snapshot, {
      node: selectedNode,
      driverName,
      config: config.config,
    });
    if (bindingMode !== "WaitForFirstConsumer") facts.race = race(facts);
  }
  return facts;
}

function race(facts: Facts): RaceStatus | undefined {
  const { snapshot } = facts;
  if (snapshot.storageClass === undefined) return undefined;
  return raceStatus({
    claim: snapshot.claim,
    storageClass: snapshot.storageClass,
    source: agentsSource(facts),
    selectedNode: facts.selectedNode,
    requestBytes: facts.requestBytes,
    nodes: snapshot.nodes,
    rows: facts.rows,
    claimEvents: facts.claimEvents,
    segmentOf: (node) => nodeSegment(snapshot, node),
    strictTopology: facts.config.config.strictTopology,
    topologySupported: facts.config.config.featureGates.Topology,
    immediateBinding: facts.config.config.nodeDeploymentImmediateBinding,
  });
}

/** The claim's source as the agents read it: a cross-namespace one only with their feature gate. */
function agentsSource(facts: Facts) {
  const { claim, source } = facts.snapshot;
  const { featureGates } = facts.config.config;
  const classified = classifyDataSource(claim, {
    crossNamespaceVolumeDataSource: featureGates.CrossNamespaceVolumeDataSource,
  });
  return classified.kind === "source" ? source : undefined;
}

/** The node an agent Event came from: `<driver>_<node>[_<id>]`. */
export function eventNode(event: EventInfo, driverName: string): string {
  return event.component.slice(driverName.length + 1).split("_")[0] ?? "";
}
