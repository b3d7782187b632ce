/**
 * The one loader of `explain`: reads the claim and everything around it
 * through the ExplainReads port, once, into an ExplainSnapshot. A claim or
 * namespace that does not exist is a value, not an exception.
 */
import { claimStorageClassName } from "../model/claim_class.ts";
import type { SourceFacts } from "../provision/source/checks.ts";
import { readClaimSourceFacts } from "../provision/source/load.ts";
import { MANAGED_BY_BASE } from "../model/labels.ts";
import { ANN_SELECTED_NODE, DRIVER_NAME_LABEL, MANAGED_BY_LABEL } from "../model/keys.ts";
import type { Claim } from "../model/objects.ts";
import type { StorageCapacity } from "../model/storage_capacity.ts";
import type { CoreEvent, Pod } from "../model/workload.ts";
import type { ExplainReads } from "./ports.ts";
import type { EventInfo, ExplainSnapshot, PodInfo } from "./snapshot.ts";

/** The claim to explain, and where its agents are. */
export interface ExplainTarget {
  namespace: string;
  name: string;
  agentSelector: string;
}

/** The snapshot, or why there is none. */
type LoadOutcome =
  | { kind: "snapshot"; snapshot: ExplainSnapshot }
  | { kind: "missing"; message: string };

/** Reads the claim, then the rest in parallel. */
export async function loadSnapshot(
  reads: ExplainReads,
  target: ExplainTarget,
  now: Date = new Date(),
): Promise<LoadOutcome> {
  const { namespace, name } = target;
  const claim = await reads.claim(namespace, name);
  if (claim === undefined) return { kind: "missing", message: await missing(reads, target) };
  const className = claimStorageClassName(claim);
  const volumeName = claim.spec.volumeName ?? "";
  const vacName = claim.spec.volumeAttributesClassName ?? "";
  const [storageClass, volume, vac, nodes, capacities, agentPods, namespacePods, source] =
    await Promise.all([
      className === "" ? undefined : reads.storageClass(className),
      volumeName === "" ? reads.persistentVolumes() : reads.persistentVolume(volumeName),
      vacName === "" ? undefined : reads.volumeAttributesClass(vacName),
      reads.nodes(),
      reads.storageCapacities(),
      reads.pods({ labelSelector: target.agentSelector }),
      reads.pods({ namespace }),
      raceSource(reads, claim),
    ]);
  const driverName = storageClass?.provisioner;
  const leases = driverName === undefined ? undefined : await reads.agentLeases(driverName);
  const consumers = namespacePods.map(podInfo).filter((pod) => pod.claimNames.includes(name));
  const eventLists = await Promise.all([
    reads.events(namespace, { kind: "PersistentVolumeClaim", name }),
    ...consumers.map((pod) => reads.events(namespace, { kind: "Pod", name: pod.name })),
  ]);
  return {
    kind: "snapshot",
    snapshot: {
      claim: claim as ExplainSnapshot["claim"],
      storageClass,
      className,
      volume: Array.isArray(volume) ? undefined : volume,
      madeFor: Array.isArray(volume)
        ? volume.find((pv) => pv.spec.claimRef?.uid === claim.metadata.uid)
        : undefined,
      volumeAttributesClass: vac,
      source,
      agentDrivers: agentDrivers(capacities),
      nodes: nodes.map((node) => ({
        name: node.metadata.name,
        labels: node.metadata.labels ?? {},
      })),
      capacities: capacities.filter((object) => object.storageClassName === className),
      agentPods: agentPods.map(podInfo),
      consumers,
      leases,
      events: eventLists.flat().map(eventInfo).sort(byTime),
      now: now.toISOString(),
    },
  };
}

/**
 * What the Immediate binding race reads about the claim's snapshot or clone
 * source, read the same way (provision/source/load.ts), only while the claim is up
 * for the race; a cross-namespace source is read too, and facts/facts.ts leaves
 * it out when the agents' feature gate refuses it. A failed read (RBAC, no
 * snapshot API) is a fact: no node is known to hold the source.
 */
function raceSource(reads: ExplainReads, claim: Claim): Promise<SourceFacts | undefined> {
  const selected = claim.metadata.annotations?.[ANN_SELECTED_NODE] ?? "";
  if (selected !== "" || (claim.spec.volumeName ?? "") !== "") return Promise.resolve(undefined);
  return readClaimSourceFacts(claim, {
    api: {
      // The snapshot read tells: a 404 when the API is not served.
      snapshotsServed: () => Promise.resolve(true),
      readVolumeSnapshot: (ref) => reads.volumeSnapshot(ref.namespace, ref.name),
      readVolumeSnapshotContent: (name) => reads.volumeSnapshotContent(name),
      readPersistentVolume: (name) => reads.persistentVolume(name),
    },
    claims: { readClaim: (ref) => reads.claim(ref.namespace, ref.name) },
    volumes: { get: () => undefined, list: () => [] },
  }, { crossNamespaceVolumeDataSource: true });
}

async function missing(reads: ExplainReads, target: ExplainTarget): Promise<string> {
  const exists = await reads.namespaceExists(target.namespace);
  if (exists === false) return `namespace ${JSON.stringify(target.namespace)} not found`;
  return `PersistentVolumeClaim ${JSON.stringify(target.name)} not found in namespace ` +
    JSON.stringify(target.namespace);
}

/** The pod as explain shows it. */
function podInfo(pod: Pod): PodInfo {
  const conditions = pod.status?.conditions ?? [];
  const ready = conditions.find((condition) => condition.type === "Ready");
  const scheduled = conditions.find((condition) => condition.type === "PodScheduled");
  return {
    namespace: pod.metadata.namespace,
    name: pod.metadata.name,
    nodeName: pod.spec.nodeName ?? "",
    phase: pod.status?.phase ?? "Pending",
    ready: ready === undefined ? undefined : {
      status: ready.status,
      ...(ready.reason === undefined ? {} : { reason: ready.reason }),
      ...(ready.message === undefined ? {} : { message: ready.message }),
    },
    unschedulable: scheduled?.status === "False"
      ? {
        ...(scheduled.reason === undefined ? {} : { reason: scheduled.reason }),
        ...(scheduled.message === undefined ? {} : { message: scheduled.message }),
      }
      : undefined,
    deletionTimestamp: pod.metadata.deletionTimestamp,
    labels: pod.metadata.labels ?? {},
    claimNames: (pod.spec.volumes ?? []).flatMap((volume) =>
      volume.persistentVolumeClaim ? [volume.persistentVolumeClaim.claimName] : []
    ),
    agentArgs: agentArgs(pod),
  };
}

/**
 * The agent container's flags: the container named csi-node-provisioner, or
 * whose image is the agent's, else the one with --node-deployment (a driver's
 * own DaemonSet keeps upstream's container name); its command after the
 * binary, then its args.
 */
function agentArgs(pod: Pod): string[] {
  const containers = pod.spec.containers ?? [];
  const flags = (container: (typeof containers)[number]) => [
    ...(container.command ?? []).slice(1),
    ...(container.args ?? []),
  ];
  const agent = containers.find((container) => container.name === "csi-node-provisioner") ??
    containers.find((container) => (container.image ?? "").includes("csi-node-provisioner")) ??
    containers.find((container) => flags(container).some(isNodeDeployment));
  return agent === undefined ? [] : flags(agent);
}

function isNodeDeployment(flag: string): boolean {
  return /^--?node-deployment(=true)?$/.test(flag);
}

/** Oldest first; times of both APIs (seconds, or microseconds) compare as instants. */
function byTime(a: EventInfo, b: EventInfo): number {
  return (Date.parse(a.time) || 0) - (Date.parse(b.time) || 0) || a.reason.localeCompare(b.reason);
}

/** The event as explain shows it. */
function eventInfo(event: CoreEvent): EventInfo {
  return {
    type: event.type ?? "Normal",
    reason: event.reason ?? "",
    message: event.message ?? "",
    component: event.source?.component || event.reportingComponent || "",
    time: event.lastTimestamp || event.series?.lastObservedTime || event.eventTime ||
      event.metadata.creationTimestamp || "",
    count: event.series?.count ?? event.count ?? 1,
    objectKind: event.involvedObject.kind ?? "",
    objectName: event.involvedObject.name ?? "",
  };
}

/** Drivers of the node agents' objects (managed-by `external-provisioner-<node>`), sorted. */
function agentDrivers(objects: readonly StorageCapacity[]): string[] {
  const drivers = new Set<string>();
  for (const object of objects) {
    const labels = object.metadata.labels ?? {};
    const driver = labels[DRIVER_NAME_LABEL];
    const managedBy = labels[MANAGED_BY_LABEL] ?? "";
    if (driver !== undefined && managedBy.startsWith(`${MANAGED_BY_BASE}-`)) drivers.add(driver);
  }
  return [...drivers].sort();
}
