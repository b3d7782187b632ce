/**
 * What the agent of a node would decide about the claim now: the agent's own
 * pure decisions (lib/provision decideClaim, then prepareProvision with the
 * options provisionControllerOptions builds) over the objects explain read.
 * explain cannot ask the driver, so it assumes the driver reports what
 * provisioning needs; the node's topology segment is the one its agent
 * published capacity for, when it did.
 */
import type { Config } from "../../config/types.ts";
import type { DriverInfo } from "../../csi/handshake.ts";
import type { Segments } from "../../csi/types.ts";
import { ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER } from "../../model/keys.ts";
import type { StorageCapacity } from "../../model/storage_capacity.ts";
import { decideClaim, namedProvisioner } from "../../provision/decide.ts";
import { provisionControllerOptions } from "../../provision/options.ts";
import { prepareProvision } from "../../provision/request/request.ts";
import type { ExplainSnapshot, NodeInfo } from "../snapshot.ts";
import { sizeText } from "../words.ts";

/** The replayed decision, in words; `blocking` when it is why the claim waits. */
export interface ReplayedDecision {
  text: string;
  blocking: boolean;
}

/** The agent of `node` (or of no node yet: "") over the snapshot, with its flags. */
export function replayDecision(
  snapshot: ExplainSnapshot,
  agent: { node: string; driverName: string; config: Config },
): ReplayedDecision {
  const { claim, storageClass } = snapshot;
  const config = { ...agent.config, nodeName: agent.node };
  const segment = nodeSegment(snapshot, agent.node);
  const options = provisionControllerOptions(config, assumedDriver(agent.driverName, segment), {
    identity: "",
  });
  const selected = claim.metadata.annotations?.[ANN_SELECTED_NODE];
  if (namedProvisioner(claim) === undefined && selected !== agent.node) {
    return {
      text: "none yet: the PV controller has not named a provisioner on the claim " +
        `(${ANN_STORAGE_PROVISIONER}; for WaitForFirstConsumer it does once a node is selected)`,
      blocking: false,
    };
  }
  const decision = decideClaim({ claim, storageClass }, options.decide);
  switch (decision.kind) {
    case "ignore":
      return { text: `leaves it alone (${decision.cause}): ${decision.reason}`, blocking: false };
    case "problem":
      return { text: `refuses it: ${decision.message}`, blocking: true };
    case "immediateBinding":
      return { text: `Immediate binding: ${decision.reason}`, blocking: false };
    case "provision":
      break;
  }
  const plan = prepareProvision(
    {
      claim,
      storageClass: decision.storageClass,
      volumeAttributesClass: snapshot.volumeAttributesClass,
    },
    options.prepare,
  );
  switch (plan.kind) {
    case "problem":
      return { text: `refuses it: ${plan.message}`, blocking: true };
    case "externalPopulator":
      return { text: `leaves it to a volume populator: ${plan.reason}`, blocking: false };
    case "plan": {
      const topology = segment === null ? " (topology not checked: no published segment)" : "";
      return {
        text: `would call CreateVolume for ${plan.volumeName} of ${
          sizeText(plan.requiredBytes)
        }${topology}`,
        blocking: false,
      };
    }
  }
}

/** Provisioning's capabilities, assumed; the segment when explain knows it. */
function assumedDriver(name: string, segment: Segments | null): DriverInfo {
  return {
    name,
    vendorVersion: "",
    pluginCapabilities: new Set(
      segment === null
        ? ["CONTROLLER_SERVICE"]
        : ["CONTROLLER_SERVICE", "VOLUME_ACCESSIBILITY_CONSTRAINTS"],
    ),
    controllerCapabilities: new Set([
      "CREATE_DELETE_VOLUME",
      "MODIFY_VOLUME",
      "SINGLE_NODE_MULTI_WRITER",
    ]),
    nodeId: "",
    segment: segment ?? {},
  };
}

/** The matchLabels of the node's own published object: exactly its agent's segment. */
export function nodeSegment(snapshot: ExplainSnapshot, node: string): Segments | null {
  const info = snapshot.nodes.find((candidate) => candidate.name === node);
  if (info === undefined) return null;
  const object = snapshot.capacities.find((candidate) => isOf(candidate, info));
  return object?.nodeTopology?.matchLabels ?? null;
}

function isOf(object: StorageCapacity, node: NodeInfo): boolean {
  const labels = object.nodeTopology?.matchLabels;
  if (labels === undefined || Object.keys(labels).length === 0) return false;
  return Object.entries(labels).every(([key, value]) => node.labels[key] === value);
}
