/**
 * The Immediate binding race with small in-memory fakes of its ports, on
 * fake time (unit tests only): a shared claim cache, a driver whose
 * GetCapacity answers a fixed size (or hangs), an API whose selectNode
 * answers as told, and every event, decline and patch recorded. Several
 * agents may share one world (the same claims, clock, published capacity
 * and data sources), as the nodes of a cluster share one API server.
 */
import type { GetCapacityResponse } from "../../lib/csi/types.ts";
import type { EventRecord } from "../../lib/model/events.ts";
import type { Claim, StorageClass } from "../../lib/model/objects.ts";
import type { PublishedCapacity } from "../../lib/model/storage_capacity.ts";
import { OwnershipRace } from "../../lib/provision/race/ownership_race.ts";
import { unowned } from "../../lib/provision/race/turn.ts";
import type { AttemptResult, DeclineReason, RaceOptions } from "../../lib/provision/race/ports.ts";
import {
  claim as buildClaim,
  DRIVER,
  provisionOptions,
  TOPOLOGY_KEY,
} from "../builders/provision.ts";
import { FakeClock } from "./clock.ts";
import { FakeDataSources } from "./data_sources.ts";
import { quiet } from "./logger.ts";

export const GI = 1024n ** 3n;

/** An Immediate claim of class "fast" that no node has selected yet. */
export function unownedClaim(name: string, options: { uid?: string; size?: string } = {}): Claim {
  return buildClaim({
    metadata: {
      name,
      uid: options.uid ?? `uid-${name}`,
      annotations: { "volume.kubernetes.io/storage-provisioner": DRIVER },
    },
    spec: { resources: { requests: { storage: options.size ?? "1Gi" } } },
  });
}

/** What one agent of the world did. */
export interface AgentRecord {
  node: string;
  race: OwnershipRace;
  /** Keys its timers put back on its claim queue, not yet synced. */
  queue: string[];
  patches: string[];
  capacityCalls: number;
  declines: DeclineReason[];
  attempts: AttemptResult[];
  events: EventRecord[];
}

/** What every agent of the world shares. */
export interface RaceWorld {
  clock: FakeClock;
  claims: Map<string, Claim>;
  /** Every node's published capacity (read only when an agent publishes). */
  published: PublishedCapacity[];
  storageClass: StorageClass;
  /** Snapshots, contents and PVs, as the API server answers every agent. */
  sources: FakeDataSources;
  /** Claims read from the API server (the sources of clones), by "namespace/name". */
  sourceClaims: Map<string, Claim>;
}

export function raceWorld(storageClass: StorageClass): RaceWorld {
  return {
    clock: new FakeClock(),
    claims: new Map(),
    published: [],
    storageClass,
    sources: new FakeDataSources(),
    sourceClaims: new Map(),
  };
}

/** How one agent of the world behaves. */
export interface AgentSetup {
  node: string;
  /** GetCapacity's answer in bytes, or "hang". Default 10Gi. */
  capacity?: bigint | "hang";
  /** GetCapacity answers only once this settles (default: at once). */
  capacityGate?: Promise<void>;
  /** selectNode's answers in turn; default "selected". "hang" waits for the abort. */
  select?: (AttemptResult | "hang")[];
  /** Whether the agent publishes (and reads) capacity. */
  publishes?: boolean;
  options?: Partial<RaceOptions>;
  random?: () => number;
}

/** One agent on its node: a race with fakes around it. */
export function raceAgent(world: RaceWorld, setup: AgentSetup): AgentRecord {
  const record = {
    node: setup.node,
    queue: [],
    patches: [],
    capacityCalls: 0,
    declines: [],
    attempts: [],
    events: [],
  } as Omit<AgentRecord, "race"> as AgentRecord;
  const answers = [...(setup.select ?? [])];
  const capacity = setup.capacity ?? 10n * GI;
  record.race = new OwnershipRace({
    claims: world.claims,
    api: {
      selectNode: (claim, node, signal) => {
        record.patches.push(`${claim.metadata.name}@${claim.metadata.resourceVersion}->${node}`);
        const next = answers.shift() ?? "selected";
        if (next === "error") return Promise.reject(new Error("apiserver unavailable"));
        return next === "hang" ? hang(signal) : Promise.resolve(next);
      },
    },
    csi: {
      getCapacity: (_request, signal) => {
        record.capacityCalls++;
        const reply = () =>
          capacity === "hang"
            ? hang<GetCapacityResponse>(signal)
            : Promise.resolve(capacityAnswer(capacity));
        return setup.capacityGate ? setup.capacityGate.then(reply) : reply();
      },
    },
    ...(setup.publishes ? { capacities: { forClass: () => world.published } } : {}),
    sources: {
      api: world.sources,
      claims: {
        readClaim: (ref) => Promise.resolve(world.sourceClaims.get(`${ref.namespace}/${ref.name}`)),
      },
      volumes: { get: () => undefined, list: () => [] },
    },
    events: { record: (event) => record.events.push(event) },
    metrics: {
      racing: () => {},
      declined: (reason) => record.declines.push(reason),
      attempted: (result) => record.attempts.push(result),
    },
    enqueue: (key) => record.queue.push(key),
    logger: quiet,
    clock: world.clock,
    random: setup.random ?? (() => 0.5),
  }, {
    nodeName: setup.node,
    baseDelayMs: 1000,
    maxDelayMs: 4000,
    timeoutMs: 500,
    prepare: provisionOptions({ nodeName: setup.node, segment: { [TOPOLOGY_KEY]: setup.node } }),
    getCapacity: true,
    ...(setup.publishes ? { publisher: publisherOf(setup.node) } : {}),
    ...setup.options,
  });
  return record;
}

/** A call that answers only by failing once its signal aborts. */
function hang<T>(signal: AbortSignal | undefined): Promise<T> {
  return new Promise((_, reject) =>
    signal?.addEventListener("abort", () => reject(new Error("cancelled")), { once: true })
  );
}

function capacityAnswer(bytes: bigint): GetCapacityResponse {
  return {
    available_capacity: String(bytes),
    maximum_volume_size: null,
    minimum_volume_size: null,
  };
}

/** The managed-by value the fakes publish under. */
export function publisherOf(node: string): string {
  return `external-provisioner-${node}`;
}

/** A node's published capacity for the world's class. */
export function publish(world: RaceWorld, node: string, bytes: bigint): void {
  world.published.push({
    publisher: publisherOf(node),
    name: `csisc-${node}`,
    uid: `uid-${node}`,
    resourceVersion: "1",
    storageClassName: world.storageClass.metadata.name,
    segment: { [TOPOLOGY_KEY]: node },
    capacityBytes: bytes,
  });
}

const signal = new AbortController().signal;

/** The claim queue's handler for one key, as the controller calls the race. */
export async function sync(world: RaceWorld, agent: AgentRecord, key: string): Promise<void> {
  const claim = world.claims.get(key);
  // The controller hands the race only claims that decideClaim says are unowned.
  if (claim === undefined || !unowned(claim)) return;
  await agent.race.consider({ key, claim, storageClass: world.storageClass }, signal);
}

/** Adds a claim to the cache and lets every agent see it. */
export async function addClaim(
  world: RaceWorld,
  agents: AgentRecord[],
  claim: Claim,
): Promise<string> {
  const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
  world.claims.set(key, claim);
  for (const agent of agents) {
    agent.race.observe({ key, new: claim });
    await sync(world, agent, key);
  }
  return key;
}

/** Changes (or deletes) a claim in the cache, as the informer's handler reports it. */
export function changeClaim(
  world: RaceWorld,
  agents: AgentRecord[],
  change: { key: string; claim: Claim | undefined },
): void {
  if (change.claim === undefined) world.claims.delete(change.key);
  else world.claims.set(change.key, change.claim);
  for (const agent of agents) agent.race.observe({ key: change.key, new: change.claim });
}

/** Moves time on in steps, syncing every key the agents' timers queued. */
export async function runFor(
  world: RaceWorld,
  agents: AgentRecord[],
  ms: number,
  stepMs = 50,
): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += stepMs) {
    world.clock.advance(stepMs);
    for (const agent of agents) {
      for (const key of agent.queue.splice(0)) await sync(world, agent, key);
    }
  }
}
