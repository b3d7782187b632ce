/**
 * The one-line verdict: where the claim is and the first reason it is there,
 * in the order docs/troubleshooting.md's "why is my claim Pending" list works through.
 */
import { nodeLabel } from "./facts/capacity.ts";
import { eventNode, type Facts } from "./facts/facts.ts";
import { expansionText } from "./facts/expansion.ts";
import { madeForText, volumeNodes } from "./facts/volume.ts";
import { ageText, listText, sizeText } from "./words.ts";

/** "Pending: …", "Bound: …". */
export function verdictOf(facts: Facts): string {
  const { claim } = facts.snapshot;
  const phase = claim.status?.phase ?? "Pending";
  const volumeName = claim.spec.volumeName ?? "";
  if (claim.metadata.deletionTimestamp !== undefined) {
    return `${phase}, being deleted: ${
      (claim.metadata.finalizers ?? []).length > 0
        ? `waiting for its finalizers (${listText(claim.metadata.finalizers ?? [])})`
        : "the claim is going away"
    }`;
  }
  if (volumeName !== "") return `${phase}: ${boundText(facts, volumeName)}`;
  const madeFor = facts.snapshot.madeFor;
  if (madeFor !== undefined) {
    return `${phase}: ${madeForText(madeFor, { ...facts, className: facts.snapshot.className })}`;
  }
  return `${phase}: ${pendingReason(facts)}`;
}

function boundText(facts: Facts, volumeName: string): string {
  const { volume, claim } = facts.snapshot;
  if (volume === undefined) return `its volume ${volumeName} does not exist`;
  if (claim.status?.phase !== "Bound") {
    return `waiting for the PV controller to bind volume ${volumeName} (its phase: ${
      volume.status?.phase ?? "unknown"
    })`;
  }
  const nodes = volumeNodes(volume, facts.snapshot.nodes);
  const where = volume.spec.nodeAffinity?.required === undefined
    ? "with no node affinity"
    : nodes.length > 0
    ? `on node ${listText(nodes)}`
    : "on no existing node";
  const expansion = expansionText(claim);
  return `bound to volume ${volumeName} ${where}${expansion ? `; ${expansion}` : ""}`;
}

/** Why a claim without a volume waits. */
function pendingReason(facts: Facts): string {
  const { snapshot } = facts;
  if (snapshot.className === "") {
    return "the claim names no StorageClass (and no default class gave it one): " +
      "only a matching pre-made PersistentVolume can bind it";
  }
  const storageClass = snapshot.storageClass;
  if (storageClass === undefined) {
    return `StorageClass ${JSON.stringify(snapshot.className)} does not exist`;
  }
  if (!facts.servedByAgents) {
    return `class ${storageClass.metadata.name} is provisioned by ${
      JSON.stringify(storageClass.provisioner)
    }, not by the csi-node-provisioner agents (they serve ${listText(snapshot.agentDrivers)})`;
  }
  if (facts.selectedNode !== "") return selectedReason(facts);
  if (facts.bindingMode !== "WaitForFirstConsumer") {
    return facts.race?.verdict ?? "Immediate binding: waiting for an agent to take it";
  }
  return schedulingReason(facts);
}

/** WaitForFirstConsumer, no node yet: a pod, then room, then the scheduler. */
function schedulingReason(facts: Facts): string {
  const { consumers, className } = facts.snapshot;
  if (consumers.length === 0) {
    return "WaitForFirstConsumer: no pod uses it yet (normal until one is created)";
  }
  const request = facts.requestBytes === undefined ? "the request" : sizeText(facts.requestBytes);
  const largest = facts.rows[0];
  if (largest !== undefined && !facts.rows.some((row) => row.fits)) {
    return `no node has ${request} free in class ${className}; largest is ${
      nodeLabel(largest)
    } with ${sizeText(largest.capacityBytes)}`;
  }
  const stuck = consumers.find((pod) => pod.unschedulable !== undefined);
  if (stuck !== undefined) {
    return `pod ${stuck.name} cannot be scheduled: ${
      stuck.unschedulable?.message ?? stuck.unschedulable?.reason ?? "no reason given"
    }`;
  }
  if (largest === undefined) {
    return `waiting for the scheduler to place pod ${
      consumers[0]?.name
    }; no node publishes capacity for class ${className}`;
  }
  return `waiting for the scheduler to place pod ${consumers[0]?.name}`;
}

/** A node is selected: its existence, its agent, the agent's decision, its last Event. */
function selectedReason(facts: Facts): string {
  const node = facts.selectedNode;
  if (!facts.snapshot.nodes.some((candidate) => candidate.name === node)) {
    return `the selected node ${node} does not exist`;
  }
  if (facts.agent !== undefined && !facts.agent.ready) {
    return `node ${node} was selected, but ${facts.agent.text}`;
  }
  if (facts.decision?.blocking) return `node ${node}'s agent ${facts.decision.text}`;
  const last = facts.agentEvents.filter((event) => eventNode(event, facts.driverName) === node)
    .at(-1);
  if (last !== undefined && last.type === "Warning") {
    return `node ${node}'s agent failed to provision it: ${last.reason}: ${last.message}`;
  }
  if (last?.reason === "ProvisioningSucceeded") {
    return `node ${node}'s agent provisioned it (${last.message}); waiting for the PV controller to bind it`;
  }
  const since = last === undefined ? "" : ` (started ${ageText(last.time, facts.snapshot.now)})`;
  return `node ${node} was selected; its agent is provisioning it${since}`;
}
