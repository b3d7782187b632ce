/**
 * Beyond upstream, whose Immediate claims that fit nowhere stay Pending
 * with no event at all: once a claim has waited longer than the max delay,
 * it gets a Warning, at most once an hour.
 *
 * - With published capacity (--enable-capacity, and objects for the class,
 *   i.e. --capacity-for-immediate-binding on the nodes), every agent reads
 *   every node's figures for the class, and exactly one agent, chosen by
 *   rendezvous hashing of the claim's uid over the publishing nodes that
 *   may race (allowedTopologies, and the claim's source: may_race.ts
 *   mayRace, asked for each publisher's segment), writes one summary: one event per claim, not one per node.
 * - Without them, each node reports its own decline (how much it has).
 *
 * Also here: the delay factor that lets a node with room for many such
 * volumes try sooner (published_capacity.ts delayFactor), read from this node's
 * own published capacity.
 */
import { type Clock, realClock } from "../../queue/clock.ts";
import { claimSubject } from "../context.ts";
import type { Claim, StorageClass } from "../../model/objects.ts";
import type { SourceFacts } from "../source/checks.ts";
import type { Race } from "./state.ts";
import { mayRace } from "./may_race.ts";
import type { RaceDeps, RaceOptions } from "./ports.ts";
import {
  delayFactor,
  ownDeclineMessage,
  segmentLabel,
  summarizeUnplaceable,
} from "./published_capacity.ts";
import { publishedRoom, type Turn, type TurnContext } from "./turn.ts";
import { requiredBytes } from "../request/size.ts";

/** The Event reason of both the summary and a node's own decline. */
export const NOT_ENOUGH_CAPACITY = "NotEnoughCapacity";

const HOUR_MS = 60 * 60 * 1000;

/** Decides and writes the Warnings; remembers when each claim was last reported. */
export class RaceReporter {
  readonly #deps: RaceDeps;
  readonly #options: RaceOptions;
  readonly #clock: Clock;
  /** By claim uid: clock.now() of the last Warning this agent wrote. */
  readonly #reportedAt = new Map<string, number>();

  constructor(deps: RaceDeps, options: RaceOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#clock = deps.clock ?? realClock;
  }

  /** This agent reads every node's capacity, so it may be the one to summarize a claim. */
  get summarizes(): boolean {
    return this.#deps.capacities !== undefined && this.#options.publisher !== undefined;
  }

  /** The first delay's factor from this node's published room for the claim. */
  delayFactor(
    context: Omit<TurnContext, "clock">,
    key: string,
    target: { claim: Claim; storageClass: StorageClass },
  ): number {
    const size = requiredBytes(target.claim);
    if (!size.ok) return 1;
    const room = publishedRoom(context, { key, className: target.storageClass.metadata.name });
    return delayFactor(room, size.value);
  }

  /** When an excluded node looks at the claim again: at the max delay, then every max delay. */
  nextLookMs(race: Race): number {
    const { maxDelayMs } = this.#options;
    const waited = this.#clock.now() - race.since;
    return waited <= maxDelayMs ? maxDelayMs - waited + 1 : maxDelayMs;
  }

  /** After a decline (or an excluded turn): the summary or this node's own report, when due. */
  afterDecline(
    race: Race,
    target: { claim: Claim; storageClass: StorageClass; turn: Turn },
  ): void {
    const now = this.#clock.now();
    if (now - race.since <= this.#options.maxDelayMs) return;
    const last = this.#reportedAt.get(race.uid);
    if (last !== undefined && now - last < (this.#options.reportEveryMs ?? HOUR_MS)) return;
    const summary = this.#summary({ ...target, source: race.source });
    const message = summary === undefined ? this.#ownDecline(target) : summary;
    if (message === null || message === undefined) return;
    this.#reportedAt.set(race.uid, now);
    this.#deps.logger.warn({ claim: race.key }, message);
    this.#deps.events.record({
      subject: claimSubject(target.claim),
      type: "Warning",
      reason: NOT_ENOUGH_CAPACITY,
      message,
    });
  }

  forget(race: Race): void {
    this.#reportedAt.delete(race.uid);
  }

  /** The summary when this agent is its reporter; null when nothing is to be said; undefined without figures. */
  #summary(
    target: { claim: Claim; storageClass: StorageClass; source: SourceFacts | undefined },
  ): string | null | undefined {
    const { capacities } = this.#deps;
    const { publisher } = this.#options;
    const size = requiredBytes(target.claim);
    if (capacities === undefined || publisher === undefined || !size.ok) return undefined;
    const className = target.storageClass.metadata.name;
    const summary = summarizeUnplaceable({
      claimUid: target.claim.metadata.uid,
      className,
      requestBytes: size.value,
      objects: capacities.forClass(className),
      mayRace: (segment) =>
        mayRace(
          { ...target, node: { name: segmentLabel(segment), segment } },
          this.#options.prepare,
        ).ok,
    });
    switch (summary.kind) {
      case "noPublishers":
        return undefined;
      case "fits":
        return null;
      case "report":
        return summary.reporter === publisher ? summary.message : null;
    }
  }

  #ownDecline(target: { storageClass: StorageClass; turn: Turn }): string | undefined {
    const { turn } = target;
    if (turn.kind !== "declined" || turn.room === undefined) return undefined;
    return ownDeclineMessage(this.#options.nodeName, {
      className: target.storageClass.metadata.name,
      freeBytes: turn.room.freeBytes,
      requestBytes: turn.requestBytes,
      source: turn.room.source,
    });
  }
}
