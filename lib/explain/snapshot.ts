/**
 * What `explain` reads from the cluster about one claim, as plain data: the
 * loader (load.ts) fills it through the ExplainReads port, the diagnosis
 * (explain.ts and facts/) reads only this. Objects keep the API's own JSON shape, cut
 * down to the fields the explanation uses.
 */
import type {
  Claim,
  PersistentVolume,
  StorageClass,
  VolumeAttributesClass,
} from "../model/objects.ts";
import type { AgentLease } from "../model/lease.ts";
import type { StorageCapacity } from "../model/storage_capacity.ts";
import type { SourceFacts } from "../provision/source/checks.ts";

/** A Node's name and labels (its topology). */
export interface NodeInfo {
  name: string;
  labels: Record<string, string>;
}

/** A pod condition or the pod's phase, as the explanation shows them. */
export interface PodInfo {
  namespace: string;
  name: string;
  /** spec.nodeName; "" while unscheduled. */
  nodeName: string;
  phase: string;
  /** The Ready condition: undefined when the pod has none. */
  ready?: { status: string; reason?: string; message?: string } | undefined;
  /** The PodScheduled condition when it is False (the scheduler's reason). */
  unschedulable?: { reason?: string; message?: string } | undefined;
  deletionTimestamp?: string | undefined;
  labels: Record<string, string>;
  /** The claims its volumes name. */
  claimNames: string[];
  /** Command-line flags of the agent container (command after the binary, then args). */
  agentArgs: string[];
}

/** One Event, whichever API wrote it (core/v1 or events.k8s.io/v1 read as core/v1). */
export interface EventInfo {
  type: string;
  reason: string;
  message: string;
  /** source.component, or reportingComponent for events.k8s.io Events. */
  component: string;
  /** The most recent occurrence (lastTimestamp, eventTime or creationTimestamp). */
  time: string;
  count: number;
  /** "PersistentVolumeClaim" or "Pod". */
  objectKind: string;
  objectName: string;
}

/** Everything explain knows about the claim. */
export interface ExplainSnapshot {
  claim: Claim & { status?: { phase?: string } };
  /** Undefined when the claim names no class, or the class does not exist. */
  storageClass: StorageClass | undefined;
  /** The class's name as the claim names it; "" for none. */
  className: string;
  /** The PV of spec.volumeName, when set and it exists. */
  volume: PersistentVolume | undefined;
  /**
   * While the claim names no volume: a PV whose claimRef names the claim (by
   * uid), made for it and not bound yet.
   */
  madeFor: PersistentVolume | undefined;
  /** The VolumeAttributesClass the claim names, when it exists. */
  volumeAttributesClass: VolumeAttributesClass | undefined;
  /**
   * What was read about the claim's snapshot or clone source while it is up
   * for the Immediate binding race (lib/provision/source/load.ts);
   * undefined without one, or once a node is selected.
   */
  source?: SourceFacts | undefined;
  nodes: NodeInfo[];
  /**
   * The drivers the agents publish capacity for (the driver label of node-mode
   * CSIStorageCapacity objects, any class): who serves which provisioner.
   */
  agentDrivers: string[];
  /** Every CSIStorageCapacity of the class (any namespace). */
  capacities: StorageCapacity[];
  /** The agents' pods (the DaemonSet's label selector), all namespaces. */
  agentPods: PodInfo[];
  /** Pods in the claim's namespace whose volumes use the claim. */
  consumers: PodInfo[];
  /** The class driver's agents' Leases; undefined when unread (no class, or no permission). */
  leases?: AgentLease[] | undefined;
  /** Events of the claim and of its consumers, oldest first. */
  events: EventInfo[];
  /** When the explanation was made (ISO time), for ages. */
  now: string;
}
