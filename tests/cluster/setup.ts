/** Cluster-wide objects a CSI deployment brings: CSIDriver, StorageClasses, the agents' namespace. */

import { capacityFor, type DriverKind, type DriverOptions } from "./drivers.ts";
import type { V1CSIDriver, V1StorageClass } from "@kubernetes/client-node";
import {
  DEMOCRATIC_DRIVER_NAME,
  DEMOCRATIC_STORAGE_CLASS,
  DEMOCRATIC_TOPOLOGY_KEY,
  democraticCsiDriver,
  democraticStorageClass,
} from "./democratic.ts";
import {
  HOSTPATH_DRIVER_NAME,
  HOSTPATH_TOPOLOGY_KEY,
  hostpathCsiDriver,
  hostpathStorageClass,
} from "./hostpath.ts";
import { createIfMissing } from "./identity.ts";
import type { AdminClients } from "./kubeconfig.ts";
import {
  csiDriverObject,
  storageClassObject,
  TEST_DRIVER_NAME,
  TEST_TOPOLOGY_KEY,
} from "./nodes.ts";

export interface ClusterObjectsOptions {
  /** "none": no CSIDriver and no classes (a cluster without CSI driver). */
  driverKind: DriverKind;
  attachRequired: boolean;
  /** Create the CSIDriver object; default true. */
  csiDriver?: boolean;
  /** CSIDriver.spec.storageCapacity; default true. */
  storageCapacity?: boolean;
  storageClasses: boolean;
  driverOptions: DriverOptions;
  nodes: string[];
  agentNamespace: string;
}

/** Pool names over all nodes, in first-seen order. */
export function poolNames(driverOptions: DriverOptions, nodes: string[]): string[] {
  const pools = new Set<string>();
  nodes.forEach((node, index) => {
    for (const pool of Object.keys(capacityFor(driverOptions, node, index))) pools.add(pool);
  });
  return [...pools];
}

/** The driver's name and the topology key of its NodeGetInfo (a label of each fake node). */
export function driverIdentity(kind: DriverKind): { driverName: string; topologyKey: string } {
  if (kind === "hostpath") {
    return { driverName: HOSTPATH_DRIVER_NAME, topologyKey: HOSTPATH_TOPOLOGY_KEY };
  }
  if (kind === "democratic") {
    return { driverName: DEMOCRATIC_DRIVER_NAME, topologyKey: DEMOCRATIC_TOPOLOGY_KEY };
  }
  return { driverName: TEST_DRIVER_NAME, topologyKey: TEST_TOPOLOGY_KEY };
}

/**
 * The class of a pool: upstream's `csi-hostpath-<pool>` for hostpath,
 * `test-<pool>` for the test driver; democratic-csi has one class for all.
 */
export function storageClassName(kind: DriverKind, pool: string): string {
  if (kind === "democratic") return DEMOCRATIC_STORAGE_CLASS;
  return kind === "hostpath" ? `csi-hostpath-${pool}` : `test-${pool}`;
}

function csiDriverOf(
  kind: DriverKind,
  settings: { attachRequired: boolean; storageCapacity: boolean },
): V1CSIDriver {
  if (kind === "hostpath") return hostpathCsiDriver(settings);
  if (kind === "democratic") return democraticCsiDriver(settings);
  return csiDriverObject(TEST_DRIVER_NAME, settings);
}

/** The driver's StorageClasses: one per pool, or democratic-csi's one. */
export function storageClassesOf(kind: DriverKind, pools: string[]): V1StorageClass[] {
  if (kind === "democratic") return [democraticStorageClass()];
  if (kind === "hostpath") return pools.map(hostpathStorageClass);
  return pools.map((pool) => storageClassObject(pool, { driverName: TEST_DRIVER_NAME }));
}

export async function createClusterObjects(
  admin: AdminClients,
  options: ClusterObjectsOptions,
): Promise<void> {
  await createIfMissing(() =>
    admin.core.createNamespace({ body: { metadata: { name: options.agentNamespace } } })
  );
  const kind = options.driverKind;
  if (kind === "none") return;
  const driverSettings = {
    attachRequired: options.attachRequired,
    storageCapacity: options.storageCapacity ?? true,
  };
  if (options.csiDriver ?? true) {
    await admin.storage.createCSIDriver({ body: csiDriverOf(kind, driverSettings) });
  }
  if (!options.storageClasses) return;
  for (const body of storageClassesOf(kind, poolNames(options.driverOptions, options.nodes))) {
    await admin.storage.createStorageClass({ body });
  }
}
