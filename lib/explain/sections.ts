/**
 * The sections under the verdict, in a fixed order: the claim, its class,
 * the node, whether it or its agent is gone, capacity, the agent's decision, the race (Immediate), the volume
 * (bound), then the Events of the claim and of its pods.
 */
import type { PersistentVolume } from "../model/objects.ts";
import { nodeLabel } from "./facts/capacity.ts";
import { eventNode, type Facts } from "./facts/facts.ts";
import type { EventInfo } from "./snapshot.ts";
import { affinityText, volumeNodes } from "./facts/volume.ts";
import { ageText, sizeText } from "./words.ts";

/** A titled block of lines. */
export interface Section {
  title: string;
  lines: string[];
}

/** Events shown per object: the last ones. */
const LAST_EVENTS = 8;

/** Every section that has something to say. */
export function sectionsOf(facts: Facts): Section[] {
  const sections = [claimSection(facts), classSection(facts), nodeSection(facts)];
  if (facts.nodeLoss.length > 0) sections.push({ title: "Node loss", lines: facts.nodeLoss });
  if (facts.snapshot.storageClass !== undefined && facts.servedByAgents) {
    sections.push(capacitySection(facts), agentSection(facts));
  }
  if (facts.race !== undefined) {
    sections.push({ title: "Immediate binding race", lines: facts.race.lines });
  }
  const volume = facts.snapshot.volume ?? facts.snapshot.madeFor;
  if (volume !== undefined) sections.push(volumeSection(volume, facts));
  sections.push(eventsSection(`Events of claim ${facts.key}`, facts.claimEvents, facts));
  for (const pod of facts.snapshot.consumers) {
    const events = facts.snapshot.events.filter((event) =>
      event.objectKind === "Pod" && event.objectName === pod.name
    );
    const where = pod.nodeName === "" ? "not scheduled" : `on node ${pod.nodeName}`;
    const section = eventsSection(
      `Events of pod ${pod.namespace}/${pod.name} (${pod.phase}, ${where})`,
      events,
      facts,
    );
    sections.push(section);
  }
  return sections;
}

function claimSection(facts: Facts): Section {
  const { claim } = facts.snapshot;
  const request = facts.requestBytes === undefined
    ? `no valid storage request (${claim.spec.resources?.requests?.storage ?? "none"})`
    : `requests ${sizeText(facts.requestBytes)}`;
  const modes = (claim.spec.accessModes ?? []).join(", ") || "no access mode";
  return {
    title: `Claim ${facts.key}`,
    lines: [`${claim.status?.phase ?? "Pending"}, ${request}, ${modes}`],
  };
}

function classSection(facts: Facts): Section {
  const { storageClass, className } = facts.snapshot;
  if (className === "") return { title: "StorageClass", lines: ["none named"] };
  if (storageClass === undefined) {
    return { title: `StorageClass ${className}`, lines: ["does not exist"] };
  }
  const lines = [
    `provisioner ${storageClass.provisioner}, binding mode ${facts.bindingMode}`,
  ];
  if (storageClass.allowedTopologies?.length) {
    lines.push(`allowedTopologies: ${JSON.stringify(storageClass.allowedTopologies)}`);
  }
  if (!facts.servedByAgents) {
    lines.push(
      `no csi-node-provisioner agent serves it (agents publish capacity for ${
        facts.snapshot.agentDrivers.join(", ")
      })`,
    );
  }
  return { title: `StorageClass ${className}`, lines };
}

function nodeSection(facts: Facts): Section {
  if (facts.selectedNode === "") return { title: "Selected node", lines: ["none yet"] };
  const lines = [facts.agent?.text ?? ""];
  if (!facts.snapshot.nodes.some((node) => node.name === facts.selectedNode)) {
    lines.unshift("no such Node object");
  }
  return { title: `Selected node ${facts.selectedNode}`, lines };
}

function capacitySection(facts: Facts): Section {
  const request = facts.requestBytes === undefined ? "?" : sizeText(facts.requestBytes);
  const title =
    `Published capacity for class ${facts.snapshot.className} (request ${request}), largest first`;
  if (facts.rows.length === 0) {
    return { title, lines: ["no CSIStorageCapacity object for this class and driver"] };
  }
  const width = Math.max(...facts.rows.map((row) => nodeLabel(row).length));
  const lines = facts.rows.map((row) => {
    const maximum = row.maximumVolumeBytes === undefined
      ? ""
      : `, max volume ${sizeText(row.maximumVolumeBytes)}`;
    const size = `${sizeText(row.capacityBytes)}${maximum}`;
    return `${nodeLabel(row).padEnd(width)}  ${size}${row.fits ? "  fits" : ""}`;
  });
  return { title, lines };
}

function agentSection(facts: Facts): Section {
  const { config, decision } = facts;
  const node = facts.selectedNode === ""
    ? "any node (none selected)"
    : `node ${facts.selectedNode}`;
  const flags = config.source === "pod"
    ? `with the flags of pod ${config.pod}`
    : "with the default flags (no agent pod to read them from)";
  const lines = [
    `the agent's decision for ${node}, replayed ${flags}: ${decision?.text ?? "none"}`,
  ];
  const recent = facts.agentEvents.slice(-3);
  if (recent.length === 0) lines.push("no provisioner Event on the claim");
  for (const event of recent) {
    lines.push(`${eventNode(event, facts.driverName)}, ${eventLine(event, facts.snapshot.now)}`);
  }
  return { title: "Owning agent", lines };
}

function volumeSection(volume: PersistentVolume, facts: Facts): Section {
  const nodes = volumeNodes(volume, facts.snapshot.nodes);
  return {
    title: `Volume ${volume.metadata.name}`,
    lines: [
      `${volume.status?.phase ?? "unknown phase"}, ${
        volume.spec.capacity?.storage ?? "no"
      } capacity, driver ${volume.spec.csi?.driver ?? "none"}, handle ${
        volume.spec.csi?.volumeHandle ?? "none"
      }`,
      `node affinity: ${affinityText(volume)}${
        nodes.length > 0 ? ` (node ${nodes.join(", ")})` : ""
      }`,
    ],
  };
}

function eventsSection(title: string, events: readonly EventInfo[], facts: Facts): Section {
  const last = events.slice(-LAST_EVENTS);
  return {
    title,
    lines: last.length === 0
      ? ["no events"]
      : last.map((event) => eventLine(event, facts.snapshot.now)),
  };
}

function eventLine(event: EventInfo, now: string): string {
  const count = event.count > 1 ? ` x${event.count}` : "";
  return `${
    ageText(event.time, now)
  }${count}  ${event.type} ${event.reason} (${event.component}): ${event.message}`;
}
