/** Cluster-wide objects a CSI deployment brings: CSIDriver, StorageClasses, the agents' namespace. */

import { capacityFor, type DriverOptions } from "./drivers.ts";
import { createIfMissing } from "./identity.ts";
import type { AdminClients } from "./kubeconfig.ts";
import { csiDriverObject, storageClassObject } from "./nodes.ts";

export interface ClusterObjectsOptions {
  driverName: string;
  /** false: no CSIDriver and no classes (a cluster without CSI driver). */
  withDriver: boolean;
  attachRequired: boolean;
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

export async function createClusterObjects(
  admin: AdminClients,
  options: ClusterObjectsOptions,
): Promise<void> {
  await createIfMissing(() =>
    admin.core.createNamespace({ body: { metadata: { name: options.agentNamespace } } })
  );
  if (!options.withDriver) return;
  await admin.storage.createCSIDriver({
    body: csiDriverObject(options.driverName, {
      attachRequired: options.attachRequired,
      storageCapacity: options.storageCapacity ?? true,
    }),
  });
  if (!options.storageClasses) return;
  for (const pool of poolNames(options.driverOptions, options.nodes)) {
    await admin.storage.createStorageClass({
      body: storageClassObject(pool, { driverName: options.driverName }),
    });
  }
}
