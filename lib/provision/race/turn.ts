/**
 * One turn of the Immediate binding race, once the delay is over: may this
 * node race at all (allowedTopologies, the claim's source), does the volume
 * fit here (this node's published capacity first, then GetCapacity), is the
 * claim still nobody's in the cache, and then the patch of selected-node. The outcome tells the race
 * what follows; nothing here waits on a timer.
 */
import { ANN_SELECTED_NODE } from "../../model/keys.ts";
import type { Claim, StorageClass } from "../../model/objects.ts";
import type { Clock } from "../../queue/clock.ts";
import type { Race } from "./state.ts";
import type { Commitments } from "./commitments.ts";
import { askCapacity } from "./get_capacity.ts";
import { mayRace } from "./may_race.ts";
import type { DeclineReason, RaceDeps, RaceOptions } from "./ports.ts";
import { offeredBytes } from "./published_capacity.ts";
import { requiredBytes } from "../request/size.ts";

/** How much room this node has, and where the figure comes from. */
export interface Room {
  freeBytes: bigint;
  source: "published CSIStorageCapacity" | "GetCapacity";
}

/** What a turn ended in. */
export type Turn =
  /** The race is over: this node owns the claim, or the claim is no longer up for it. */
  | { kind: "over" }
  /** Conflict or error: try again after the next delay. */
  | { kind: "again" }
  /** This node cannot take the claim now. */
  | { kind: "declined"; reason: DeclineReason; requestBytes: bigint; room?: Room }
  /** This node may not race for the claim at all. */
  | { kind: "excluded" };

/** What a turn reads. */
export interface TurnContext {
  deps: RaceDeps;
  options: RaceOptions;
  clock: Clock;
  /** Space this node promised that its driver does not count yet. */
  commitments: Commitments;
}

/** Still up for the race: unbound, not being deleted, no node selected. */
export function unowned(claim: Claim): boolean {
  const selected = claim.metadata.annotations?.[ANN_SELECTED_NODE] ?? "";
  return selected === "" && !claim.spec.volumeName && !claim.metadata.deletionTimestamp;
}

/**
 * What this node's published capacity for the class leaves for the claim
 * `key` once its other commitments are taken off; undefined when it
 * publishes none.
 */
export function publishedRoom(
  context: Omit<TurnContext, "clock">,
  target: { key: string; className: string },
): bigint | undefined {
  const published = ownPublished(context, target.className);
  if (published === undefined) return undefined;
  const room = published - context.commitments.bytes(target.className, target.key);
  return room > 0n ? room : 0n;
}

/** This node's published capacity for the class, when it publishes one. */
function ownPublished(
  context: { deps: RaceDeps; options: RaceOptions },
  className: string,
): bigint | undefined {
  const { capacities } = context.deps;
  const { publisher } = context.options;
  if (capacities === undefined || publisher === undefined) return undefined;
  let most: bigint | undefined;
  for (const object of capacities.forClass(className)) {
    const offered = object.publisher === publisher ? offeredBytes(object) : undefined;
    if (offered !== undefined && (most === undefined || offered > most)) most = offered;
  }
  return most;
}

/** Takes this node's turn for the claim. */
export async function takeTurn(
  target: { key: string; claim: Claim; storageClass: StorageClass; race: Race },
  context: TurnContext,
  signal: AbortSignal,
): Promise<Turn> {
  const { deps, options } = context;
  const { claim, storageClass } = target;
  const node = { name: options.nodeName, segment: options.prepare.segment };
  const verdict = mayRace(
    { claim, storageClass, node, source: target.race.source },
    options.prepare,
  );
  if (!verdict.ok) {
    deps.logger.debug({ claim: target.key }, verdict.message);
    deps.metrics.declined(verdict.reason);
    return { kind: "excluded" };
  }
  const size = requiredBytes(claim);
  // A bad size is left to the provisioning attempt, which reports it on the claim.
  const requestBytes = size.ok ? size.value : 0n;
  const answer = await fitsHere({ ...target, requestBytes }, context, signal);
  if (signal.aborted) return { kind: "over" };
  // Other turns of this node may have committed while GetCapacity was asked.
  const fit = answer === undefined || answer.kind === "fits"
    ? lateShortfall({ ...target, requestBytes, availableBytes: answer?.availableBytes }, context)
    : answer;
  if (fit !== undefined) {
    deps.metrics.declined(fit.reason);
    deps.logger.debug(
      { claim: target.key, reason: fit.reason, ...fit.room },
      "Not trying to own claim",
    );
    return fit;
  }
  return await claimIt(target, context, signal);
}

type Declined = Extract<Turn, { kind: "declined" }>;

/** The decline when this node's published room, less its commitments, is below the request. */
function publishedShortfall(
  target: { key: string; className: string; requestBytes: bigint },
  context: TurnContext,
): Declined | undefined {
  const published = publishedRoom(context, target);
  if (published === undefined || published >= target.requestBytes) return undefined;
  const room: Room = { freeBytes: published, source: "published CSIStorageCapacity" };
  return {
    kind: "declined",
    reason: "published-capacity",
    requestBytes: target.requestBytes,
    room,
  };
}

/** The decline for GetCapacity's `availableBytes` when `committed` bytes are already promised. */
function capacityShortfall(
  requestBytes: bigint,
  space: { availableBytes: bigint; committed: bigint },
): Declined {
  const free = space.availableBytes - space.committed;
  const room: Room = { freeBytes: free > 0n ? free : 0n, source: "GetCapacity" };
  return { kind: "declined", reason: "capacity", requestBytes, room };
}

/**
 * The decline when what GetCapacity said no longer holds the claim with the
 * space this node promised since (turns of other claims whose GetCapacity call
 * passed meanwhile); run right before the claim is committed, with no wait in
 * between, so that two turns cannot both count on the same bytes.
 */
function lateShortfall(
  target: {
    key: string;
    storageClass: StorageClass;
    requestBytes: bigint;
    availableBytes: bigint | undefined;
  },
  context: TurnContext,
): Declined | undefined {
  const { key, requestBytes, availableBytes } = target;
  const className = target.storageClass.metadata.name;
  const published = publishedShortfall({ key, className, requestBytes }, context);
  if (published !== undefined || availableBytes === undefined) return published;
  const committed = context.commitments.bytes(className, key);
  if (availableBytes >= requestBytes + committed) return undefined;
  return capacityShortfall(requestBytes, { availableBytes, committed });
}

/** Undefined when the volume fits here (or GetCapacity could not tell); else the decline. */
async function fitsHere(
  target: { key: string; claim: Claim; storageClass: StorageClass; requestBytes: bigint },
  context: TurnContext,
  signal: AbortSignal,
): Promise<Declined | { kind: "fits"; availableBytes?: bigint } | undefined> {
  const { key, requestBytes } = target;
  const className = target.storageClass.metadata.name;
  const published = publishedShortfall({ key, className, requestBytes }, context);
  if (published !== undefined) return published;
  const committed = context.commitments.bytes(className, key);
  const answer = await askCapacity({ ...target, requestBytes: requestBytes + committed }, {
    csi: context.deps.csi,
    options: { ...context.options, clock: context.clock },
  }, signal);
  switch (answer.kind) {
    case "fits":
      // GetCapacity was asked for the request plus what was committed then.
      return answer.availableBytes === undefined
        ? { kind: "fits" }
        : { kind: "fits", availableBytes: answer.availableBytes };
    case "short":
      return capacityShortfall(requestBytes, { availableBytes: answer.availableBytes, committed });
    case "failed":
      context.deps.logger.warn({ claim: target.key }, `Capacity check failed: ${answer.message}`);
      return { kind: "declined", reason: "capacity-check-failed", requestBytes };
    case "unknown":
      context.deps.logger.info(
        { claim: target.key },
        `proceeding with becoming owner although the capacity check failed: ${answer.message}`,
      );
      return undefined;
  }
}

/** The last look at the cache, then the patch; the claim counts as committed meanwhile. */
async function claimIt(
  target: { key: string; race: Race },
  context: TurnContext,
  signal: AbortSignal,
): Promise<Turn> {
  const { deps, commitments } = context;
  const { key, race } = target;
  const latest = deps.claims.get(key);
  if (latest === undefined || latest.metadata.uid !== race.uid || !unowned(latest)) {
    return { kind: "over" };
  }
  commitments.commit(key, latest);
  const turn = await patch(latest, { key, context }, signal);
  const now = deps.claims.get(key);
  const ours = now?.metadata.annotations?.[ANN_SELECTED_NODE] === context.options.nodeName;
  if (turn.result !== "selected" && !ours) commitments.release(key, race.uid);
  return turn.turn;
}

async function patch(
  claim: Claim,
  target: { key: string; context: TurnContext },
  signal: AbortSignal,
): Promise<{ turn: Turn; result?: string }> {
  const { deps, options } = target.context;
  const log = deps.logger.child({ claim: target.key });
  try {
    const result = await deps.api.selectNode(claim, options.nodeName, signal);
    deps.metrics.attempted(result);
    if (result === "conflict") {
      log.info(`conflict during PVC ${target.key} update, will try again`);
      return { turn: { kind: "again" }, result };
    }
    if (result === "selected") log.info(`became owner of PVC ${target.key}`);
    return { turn: { kind: "over" }, result };
  } catch (error) {
    if (signal.aborted) return { turn: { kind: "over" } };
    deps.metrics.attempted("error");
    log.warn({ err: error }, `selecting node ${JSON.stringify(options.nodeName)} for PVC failed`);
    return { turn: { kind: "again" } };
  }
}
