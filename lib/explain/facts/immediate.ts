/**
 * The Immediate binding race as the cluster shows it: before a
 * node is selected, which nodes the class's allowedTopologies allow and which
 * of those publish room for the request; the race's Warning when nobody can
 * take the claim; once `selected-node` is set, the winner. Which nodes may
 * race is the race's own predicate (lib/provision/race/may_race.ts
 * mayRace), asked for each node.
 */
import type { Segments } from "../../csi/types.ts";
import type { Claim, StorageClass } from "../../model/objects.ts";
import type { SourceFacts } from "../../provision/source/checks.ts";
import { mayRace } from "../../provision/race/may_race.ts";
import { NOT_ENOUGH_CAPACITY } from "../../provision/race/report.ts";
import { type NodeCapacity, nodeLabel } from "./capacity.ts";
import type { EventInfo, NodeInfo } from "../snapshot.ts";
import { listText, sizeText } from "../words.ts";

/** What the race needs to know. */
export interface RaceInput {
  claim: Claim;
  storageClass: StorageClass;
  /** The claim's snapshot or clone source as the agents read it; undefined without one. */
  source?: SourceFacts | undefined;
  /** The selected node, "" before the race ends. */
  selectedNode: string;
  requestBytes: bigint | undefined;
  nodes: readonly NodeInfo[];
  rows: readonly NodeCapacity[];
  /** The claim's events, oldest first. */
  claimEvents: readonly EventInfo[];
  /** The node's published segment, null when it published none. */
  segmentOf: (node: string) => Segments | null;
  strictTopology: boolean;
  /** The agents' Topology feature gate (the driver is assumed to report its topology). */
  topologySupported: boolean;
  immediateBinding: boolean;
}

/** The race's state: a verdict while it blocks the claim, and the lines of its section. */
export interface RaceStatus {
  verdict: string | undefined;
  lines: string[];
}

/** The race's state in words. */
export function raceStatus(input: RaceInput): RaceStatus {
  if (input.selectedNode !== "") {
    return { verdict: undefined, lines: [`over: node ${input.selectedNode} won it`] };
  }
  if (!input.immediateBinding) {
    const verdict = "Immediate binding, and the agents run with " +
      "--node-deployment-immediate-binding=false: none of them provisions it";
    return { verdict, lines: ["no race: the agents do not take Immediate claims"] };
  }
  const className = input.storageClass.metadata.name;
  const byTopology = racers({ ...input, source: undefined });
  const allowed = racers(input);
  const fitting = input.rows.filter((row) =>
    row.fits && row.nodes.some((n) => allowed.includes(n))
  );
  const lines = [
    "not decided yet: no node is selected",
    input.storageClass.allowedTopologies?.length
      ? `allowed by the class's allowedTopologies: ${listText(byTopology) || "no node"}`
      : "the class has no allowedTopologies: every node may take it",
    ...sourceLines(input, { byTopology, allowed }),
    fitting.length > 0
      ? `allowed and publishing enough: ${listText(fitting.map(rowText))}`
      : input.rows.some((row) => row.nodes.some((node) => allowed.includes(node)))
      ? "no allowed node publishes enough capacity"
      : "no allowed node publishes capacity for the class",
  ];
  const summary = [...input.claimEvents].reverse().find((event) =>
    event.reason === NOT_ENOUGH_CAPACITY
  );
  if (summary !== undefined) {
    lines.push(`the race's last Warning (${summary.component}): ${summary.message}`);
    return { verdict: `Immediate binding: no node can take it: ${summary.message}`, lines };
  }
  if (fitting.length > 0) {
    const names = listText(fitting.map(nodeLabel));
    return { verdict: `Immediate binding: waiting for the race among ${names}`, lines };
  }
  const request = input.requestBytes === undefined ? "the request" : sizeText(input.requestBytes);
  const largest = input.rows.find((row) => row.nodes.some((node) => allowed.includes(node)));
  const verdict = largest === undefined
    ? `Immediate binding: waiting for the race; no allowed node publishes capacity for class ${className}, so each agent asks its driver`
    : `Immediate binding: no allowed node has ${request} free in class ${className}; largest is ${
      nodeLabel(largest)
    } with ${sizeText(largest.capacityBytes)}`;
  return { verdict, lines };
}

/**
 * The nodes that may race: the race's own predicate for each node, on the
 * segment its agent published (else the node's labels).
 */
function racers(input: RaceInput): string[] {
  const options = {
    strictTopology: input.strictTopology,
    topologySupported: input.topologySupported,
  };
  return input.nodes.filter((node: NodeInfo) => {
    const segment = input.segmentOf(node.name) ?? node.labels;
    return mayRace({ ...input, node: { name: node.name, segment } }, options).ok;
  }).map((node) => node.name);
}

/** Which of the nodes the topology allows hold a restore's or clone's source. */
function sourceLines(
  input: RaceInput,
  nodes: { byTopology: string[]; allowed: string[] },
): string[] {
  if (input.source === undefined) return [];
  const what = input.source.kind === "clone" ? "the claim it clones" : "its snapshot's volume";
  if (nodes.allowed.length === nodes.byTopology.length) {
    return [`${what}: no node is known to hold it alone, so every allowed node races`];
  }
  return [`holds ${what}, and so races: ${listText(nodes.allowed) || "no allowed node"}`];
}

function rowText(row: NodeCapacity): string {
  return `${nodeLabel(row)} (${sizeText(row.capacityBytes)})`;
}
