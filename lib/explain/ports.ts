/**
 * What `explain` needs from the cluster: reads only. main.ts hands over
 * lib/kube's ExplainReader; the unit tests an in-memory object.
 */
import type {
  Claim,
  PersistentVolume,
  StorageClass,
  VolumeAttributesClass,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from "../model/objects.ts";
import type { StorageCapacity } from "../model/storage_capacity.ts";
import type { AgentLease } from "../model/lease.ts";
import type { CoreEvent, Node, Pod } from "../model/workload.ts";

/** The reads; undefined for an object that does not exist. */
export interface ExplainReads {
  claim(namespace: string, name: string): Promise<Claim | undefined>;
  namespaceExists(name: string): Promise<boolean | "unknown">;
  storageClass(name: string): Promise<StorageClass | undefined>;
  persistentVolume(name: string): Promise<PersistentVolume | undefined>;
  persistentVolumes(): Promise<PersistentVolume[]>;
  volumeAttributesClass(name: string): Promise<VolumeAttributesClass | undefined>;
  /** A restore's source; undefined also when the VolumeSnapshot API is not served. */
  volumeSnapshot(namespace: string, name: string): Promise<VolumeSnapshot | undefined>;
  volumeSnapshotContent(name: string): Promise<VolumeSnapshotContent | undefined>;
  nodes(): Promise<Node[]>;
  storageCapacities(): Promise<StorageCapacity[]>;
  pods(options: { namespace?: string; labelSelector?: string }): Promise<Pod[]>;
  /** The driver's agents' Leases (all namespaces); undefined when they may not be read. */
  agentLeases(driverName: string): Promise<AgentLease[] | undefined>;
  events(namespace: string, object: { kind: string; name: string }): Promise<CoreEvent[]>;
}
