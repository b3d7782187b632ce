/**
 * Lost nodes: which agents whose Lease expired this watcher acts for, and
 * what to do for one once its Node has been read. Exactly one live watcher
 * acts for a gone agent, chosen by rendezvous hashing of its managed-by
 * value over the live watchers (as the capacity withdrawal does). The clock
 * of a deleted Node is the node-gone-since note on the gone agent's Lease,
 * so that a new watcher continues it; without the note it starts again,
 * always later, never earlier. Pure.
 */
import { type AgentSighting, isAlive } from "../../liveness/view.ts";
import { rendezvous } from "../../model/rendezvous.ts";

/** What the choice of the lost agents reads. */
export interface LostInput {
  nowMs: number;
  /** This agent's managed-by value. */
  self: string;
  /** liveness/watchers.ts livenessWatchers(). */
  watchers: readonly string[];
  agents: readonly AgentSighting[];
}

/** The agents whose Lease expired, and those of them this agent acts for. */
export interface LostChoice {
  expired: AgentSighting[];
  mine: AgentSighting[];
}

/** Chooses; none are this agent's unless it is a live watcher. */
export function chooseLost(input: LostInput): LostChoice {
  const { nowMs, self } = input;
  const alive = new Set(input.agents.filter((a) => isAlive(a, nowMs)).map((a) => a.publisher));
  const live = input.watchers.filter((watcher) => alive.has(watcher));
  const expired = input.agents
    .filter((agent) => agent.publisher !== self && !isAlive(agent, nowMs))
    .sort((a, b) => a.publisher < b.publisher ? -1 : 1);
  const mine = live.includes(self)
    ? expired.filter((agent) => rendezvous(agent.publisher, live) === self)
    : [];
  return { expired, mine };
}

/** What to do for a gone agent's node. */
export type NodeLossStep =
  /** The Node exists: nothing is lost (and there is no note to clear). */
  | { kind: "none" }
  /** The Node exists again: the note goes, nothing is released. */
  | { kind: "clear" }
  /** The Node was just seen deleted: the clock starts now. */
  | { kind: "mark"; sinceMs: number }
  /** Deleted since `sinceMs`, not for long enough (or the release is off). */
  | { kind: "wait"; sinceMs: number }
  /** Deleted for --node-loss-release-after: its volumes are released. */
  | { kind: "release"; sinceMs: number };

/** Decides from the Node's read (`nodeExists`) and the clock as noted. */
export function nodeLossStep(input: {
  nowMs: number;
  nodeExists: boolean;
  /** The note on the Lease, or the one this agent wrote and has not seen yet. */
  goneSinceMs: number | undefined;
  releaseAfterMs: number;
}): NodeLossStep {
  const { nowMs, goneSinceMs, releaseAfterMs } = input;
  if (input.nodeExists) return goneSinceMs === undefined ? { kind: "none" } : { kind: "clear" };
  if (goneSinceMs === undefined) return { kind: "mark", sinceMs: nowMs };
  const due = releaseAfterMs > 0 && nowMs - goneSinceMs >= releaseAfterMs;
  return { kind: due ? "release" : "wait", sinceMs: goneSinceMs };
}

/** The nodes gone as the Leases' notes tell (any watcher's): the gauge. */
export function lostNodeCount(expired: readonly AgentSighting[]): number {
  return expired.filter((agent) => agent.nodeGoneSinceMs !== undefined).length;
}
