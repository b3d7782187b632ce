/** Cluster-wide objects a CSI deployment brings: CSIDriver, StorageClasses, the agents' namespace. */

import { capacityFor, type DriverKind, type DriverOptions } from "./drivers.ts";
import { hostpathCsiDriver, hostpathStorageClass } from "./hostpath.ts";
import { createIfMissing } from "./identity.ts";
import type { AdminClients } from "./kubeconfig.ts";
import { csiDriverObject, storageClassObject, TEST_DRIVER_NAME } from "./nodes.ts";

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

/** The class of a pool: upstream's `csi-hostpath-<pool>` for hostpath, `test-<pool>` for the test driver. */
export function storageClassName(kind: DriverKind, pool: string): string {
  return kind === "hostpath" ? `csi-hostpath-${pool}` : `test-${pool}`;
}

export async function createClusterObjects(
  admin: AdminClients,
  options: ClusterObjectsOptions,
): Promise<void> {
  await createIfMissing(() =>
    admin.core.createNamespace({ body: { metadata: { name: options.agentNamespace } } })
  );
  if (options.driverKind === "none") return;
  const hostpath = options.driverKind === "hostpath";
  const driverSettings = {
    attachRequired: options.attachRequired,
    storageCapacity: options.storageCapacity ?? true,
  };
  if (options.csiDriver ?? true) {
    await admin.storage.createCSIDriver({
      body: hostpath
        ? hostpathCsiDriver(driverSettings)
        : csiDriverObject(TEST_DRIVER_NAME, driverSettings),
    });
  }
  if (!options.storageClasses) return;
  for (const pool of poolNames(options.driverOptions, options.nodes)) {
    await admin.storage.createStorageClass({
      body: hostpath
        ? hostpathStorageClass(pool)
        : storageClassObject(pool, { driverName: TEST_DRIVER_NAME }),
    });
  }
}
