/**
 * The release of lost nodes' volumes, on the agents that watch the Leases:
 * every few seconds it reads the Node of each gone agent it acts for
 * (chooseLost), notes on the gone agent's Lease when that Node was first
 * seen deleted, clears the note when the Node exists again, and once the
 * Node has been gone for --node-loss-release-after lists every PV once and
 * hands that node's volumes to the handler. Once none of them is on its
 * way out, it lists that node's volumes again only every RELIST_MS.
 */
import type { Logger } from "../../log/logger.ts";
import { livenessWatchers } from "../../liveness/watchers.ts";
import type { AgentSighting } from "../../liveness/view.ts";
import type { LostVolumeHandler } from "./act.ts";
import { chooseLost, lostNodeCount, nodeLossStep } from "./decide.ts";
import { nodeGoneCause } from "./events.ts";
import type { LostMetrics } from "./metrics.ts";
import type { LeaseView, LostNodeReads, Publishers } from "./ports.ts";
import { lostNodeVolumes } from "./volumes.ts";

/** How long a lost node whose volumes needed nothing waits before its PVs are listed again. */
const RELIST_MS = 5 * 60_000;

/** What the loop is given. */
export interface ReleaserDeps {
  leases: LeaseView;
  publishers: Publishers;
  reads: LostNodeReads;
  volumes: LostVolumeHandler;
  metrics: LostMetrics;
  logger: Logger;
  now?: () => number;
}

/** What it is configured with. */
export interface ReleaserOptions {
  /** This agent's managed-by value. */
  self: string;
  driverName: string;
  releaseAfterMs: number;
}

/** The rounds; start.ts runs them on a timer. */
export class LostNodeReleaser {
  readonly #deps: ReleaserDeps;
  readonly #options: ReleaserOptions;
  /** Notes this agent wrote and its watch may not have delivered yet. */
  #written = new Map<string, number>();
  /** By managed-by value: when its volumes were last listed with nothing left to change. */
  #settledAt = new Map<string, number>();

  constructor(deps: ReleaserDeps, options: ReleaserOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  /** One round; nothing while this agent does not watch the Leases. */
  async check(signal: AbortSignal): Promise<void> {
    const { leases, publishers } = this.#deps;
    if (!publishers.hasSynced() || !leases.hasSynced()) {
      this.#deps.metrics.lostNodes(0);
      return;
    }
    const nowMs = (this.#deps.now ?? Date.now)();
    const { self } = this.#options;
    const known = publishers.list();
    const watchers = livenessWatchers(self, known, leases.gone(known, nowMs));
    const choice = chooseLost({ nowMs, self, watchers, agents: leases.agents() });
    this.#deps.metrics.lostNodes(lostNodeCount(choice.expired));
    const mine = new Set(choice.mine.map((agent) => agent.publisher));
    for (const key of this.#written.keys()) if (!mine.has(key)) this.#written.delete(key);
    for (const agent of choice.mine) {
      if (signal.aborted) return;
      await this.#step(agent, nowMs, signal);
    }
  }

  async #step(agent: AgentSighting, nowMs: number, signal: AbortSignal): Promise<void> {
    const { reads } = this.#deps;
    const nodeExists = await reads.nodeExists(agent.node, signal);
    const goneSinceMs = agent.nodeGoneSinceMs ?? this.#written.get(agent.publisher);
    const step = nodeLossStep({
      nowMs,
      nodeExists,
      goneSinceMs,
      releaseAfterMs: this.#options.releaseAfterMs,
    });
    if (step.kind === "none") return;
    if (step.kind === "clear") {
      this.#written.delete(agent.publisher);
      this.#settledAt.delete(agent.publisher);
      await reads.noteGoneSince(agent.lease, undefined, signal);
      this.#deps.logger.info({ lostNode: agent.node }, "The Node of a gone agent exists again");
      return;
    }
    if (step.kind === "mark") {
      if (await reads.noteGoneSince(agent.lease, step.sinceMs, signal)) {
        this.#written.set(agent.publisher, step.sinceMs);
      }
      this.#deps.logger.warn(
        { lostNode: agent.node, releaseAfterMs: this.#options.releaseAfterMs },
        "The Node of a gone agent is deleted: its volumes are lost unless it comes back",
      );
      return;
    }
    if (step.kind === "release") await this.#release(agent, step.sinceMs, nowMs, signal);
  }

  async #release(
    agent: AgentSighting,
    sinceMs: number,
    nowMs: number,
    signal: AbortSignal,
  ): Promise<void> {
    const settled = this.#settledAt.get(agent.publisher);
    if (settled !== undefined && nowMs - settled < RELIST_MS) return;
    const pvs = lostNodeVolumes(await this.#deps.reads.listVolumes(signal), {
      driverName: this.#options.driverName,
      node: agent.node,
      segment: agent.segment,
    });
    const cause = nodeGoneCause(agent.node, sinceMs);
    const moving = await this.#deps.volumes.handle(pvs, cause, signal);
    if (moving === 0) this.#settledAt.set(agent.publisher, nowMs);
    else this.#settledAt.delete(agent.publisher);
  }
}
