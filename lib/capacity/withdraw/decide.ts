/**
 * Capacity withdrawn when a node's agent is gone: which nodes have
 * CSIStorageCapacity objects of the driver but no live agent, since when,
 * and which of them this agent withdraws now. Exactly one live agent acts
 * for a node, chosen by rendezvous hashing of the node's managed-by value
 * over the live agents (as the NotEnoughCapacity summary is). Pure.
 */
import type { EventRecord } from "../../model/events.ts";
import { MANAGED_BY_BASE } from "../../model/labels.ts";
import { rendezvous } from "../../model/rendezvous.ts";
import type { PublishedCapacity } from "../../model/storage_capacity.ts";
import { type AgentSighting, isAlive } from "../../liveness/view.ts";

/** The Event reason of a withdrawal. */
export const CAPACITY_WITHDRAWN = "CapacityWithdrawn";

/** What the decision reads. */
export interface WithdrawInput {
  nowMs: number;
  /** This agent's managed-by value. */
  self: string;
  /** --capacity-withdraw-after; 0: nothing is withdrawn, the unattended nodes are only reported. */
  withdrawAfterMs: number;
  /** liveness/watchers.ts livenessWatchers(): the agents that may act. */
  watchers: readonly string[];
  agents: readonly AgentSighting[];
  /** The driver's objects in the namespace, of every node. */
  objects: readonly PublishedCapacity[];
  /** By managed-by value: when this agent first saw objects of an agent that has no Lease. */
  unleasedSince: ReadonlyMap<string, number>;
}

/** A node with capacity objects and no live agent. */
export interface Unattended {
  publisher: string;
  node: string;
  /** The Lease's expiry, or when objects without a Lease were first seen. */
  goneSinceMs: number;
  /** The agent's Lease, when it has one. */
  lease?: string;
  objects: PublishedCapacity[];
}

/** The decision. */
export interface WithdrawDecision {
  unattended: Unattended[];
  /** Those this agent withdraws now. */
  withdraw: Unattended[];
  /** The input's unleasedSince for the next decision: only agents that still have objects and no Lease. */
  unleasedSince: Map<string, number>;
}

/** Decides; the agent calls it on a timer with the caches as they are. */
export function decideWithdrawals(input: WithdrawInput): WithdrawDecision {
  const { nowMs } = input;
  const sightings = new Map(input.agents.map((agent) => [agent.publisher, agent]));
  const alive = new Set(input.agents.filter((a) => isAlive(a, nowMs)).map((a) => a.publisher));
  const live = input.watchers.filter((watcher) => alive.has(watcher));
  const actsAtAll = input.withdrawAfterMs > 0 && live.includes(input.self);
  const unleasedSince = new Map<string, number>();
  const unattended: Unattended[] = [];
  for (const [publisher, objects] of byPublisher(input.objects, input.self)) {
    const sighting = sightings.get(publisher);
    if (sighting !== undefined && isAlive(sighting, nowMs)) continue;
    let goneSinceMs: number;
    if (sighting === undefined) {
      goneSinceMs = input.unleasedSince.get(publisher) ?? nowMs;
      unleasedSince.set(publisher, goneSinceMs);
    } else {
      goneSinceMs = sighting.aliveUntilMs;
    }
    const node = sighting?.node ?? objects.find((o) => o.ownerNode)?.ownerNode?.name ?? publisher;
    unattended.push({
      publisher,
      node,
      goneSinceMs,
      ...(sighting === undefined ? {} : { lease: sighting.lease }),
      objects,
    });
  }
  const withdraw = actsAtAll
    ? unattended.filter((gone) =>
      nowMs - gone.goneSinceMs >= input.withdrawAfterMs &&
      rendezvous(gone.publisher, live) === input.self
    )
    : [];
  return { unattended, withdraw, unleasedSince };
}

/**
 * Objects by managed-by value, sorted by it: not this agent's own, nor
 * upstream's central provisioner's (one managed-by value for all, and no
 * node agent at all).
 */
function byPublisher(
  objects: readonly PublishedCapacity[],
  self: string,
): Map<string, PublishedCapacity[]> {
  const groups = new Map<string, PublishedCapacity[]>();
  const sorted = [...objects].sort((a, b) => a.publisher < b.publisher ? -1 : 1);
  for (const object of sorted) {
    if (object.publisher === self || object.publisher === MANAGED_BY_BASE) continue;
    const group = groups.get(object.publisher) ?? [];
    group.push(object);
    groups.set(object.publisher, group);
  }
  return groups;
}

/**
 * The Event of a withdrawal: on the Node that owns the objects
 * (--capacity-owner-node, the default of deploy/ and the chart), where
 * `kubectl describe node` shows it; else on the first object withdrawn.
 */
export function withdrawalEvent(
  gone: Unattended,
  context: { namespace: string; withdrawn: number },
): EventRecord {
  const owner = gone.objects.find((object) => object.ownerNode)?.ownerNode;
  const first = gone.objects[0]!;
  const subject = owner !== undefined ? { kind: "Node", name: owner.name, uid: owner.uid } : {
    kind: "CSIStorageCapacity",
    apiVersion: "storage.k8s.io/v1",
    namespace: context.namespace,
    name: first.name,
    uid: first.uid,
  };
  const since = new Date(gone.goneSinceMs).toISOString();
  const how = gone.lease === undefined
    ? "has no Lease"
    : `has not renewed its Lease ${context.namespace}/${gone.lease}`;
  const classes = [...new Set(gone.objects.map((object) => object.storageClassName))].sort();
  return {
    subject,
    type: "Warning",
    reason: CAPACITY_WITHDRAWN,
    message:
      `The CSI provisioner agent of node ${gone.node} ${how} and counts as gone since ${since}: deleted its ${context.withdrawn} CSIStorageCapacity object(s) (StorageClasses ${
        classes.join(", ")
      }) so that the scheduler stops placing volumes there. The agent publishes them again when it is back.`,
  };
}
