/**
 * democratic-csi's local-hostpath driver (v1.9.0, installed by
 * democratic_install.ts) as a fake node's driver: its config file and
 * command line, its CSIDriver object and StorageClass as its Helm chart's
 * examples/local-hostpath.yaml declares them, and the volumes and snapshots
 * it holds, which are plain directories under the node's base path
 * (src/driver/controller-client-common: `<base>/v/<volume id>`,
 * `<base>/s/<source volume id>-<snapshot name>`).
 */

import type { V1CSIDriver, V1StorageClass } from "@kubernetes/client-node";
import { dump } from "js-yaml";
import { join } from "node:path";
import type { DriverVolume } from "./hostpath.ts";

export const DEMOCRATIC_DRIVER_NAME = "org.democratic-csi.local-hostpath";
/** The segment key of NodeGetInfo and of CreateVolume's accessible_topology (controller-local-hostpath). */
export const DEMOCRATIC_TOPOLOGY_KEY = "org.democratic-csi.topology/node";
/** The cluster's one class for the driver (the chart's example names it `local-hostpath`). */
export const DEMOCRATIC_STORAGE_CLASS = "democratic-local";
export const DEMOCRATIC_SNAPSHOT_CLASS = "democratic-local";
/** The CSI spec version the chart passes by default (csiDriver.version). */
const CSI_VERSION = "1.5.0";

/** The driver's config file: volumes and snapshots under `baseDir`, world-writable as in upstream's example. */
export function democraticConfig(baseDir: string): string {
  return dump({
    driver: "local-hostpath",
    "local-hostpath": {
      shareBasePath: baseDir,
      controllerBasePath: baseDir,
      dirPermissionsMode: "0777",
      dirPermissionsUser: 0,
      dirPermissionsGroup: 0,
    },
  });
}

export interface DemocraticOptions {
  configFile: string;
  /** The unix socket path it listens on (not a URL). */
  socket: string;
  /** Appended to the command line. */
  extraArgs?: readonly string[];
}

/**
 * The node container's args of the chart's node DaemonSet (templates/node.yaml
 * with controller.strategy=node: node and controller services in one process).
 * The node id comes from CSI_NODE_ID in the environment.
 */
export function democraticArgs(options: DemocraticOptions): string[] {
  return [
    `--csi-version=${CSI_VERSION}`,
    `--csi-name=${DEMOCRATIC_DRIVER_NAME}`,
    `--driver-config-file=${options.configFile}`,
    "--log-level=info",
    "--csi-mode=node",
    "--csi-mode=controller",
    `--server-socket=${options.socket}`,
    ...(options.extraArgs ?? []),
  ];
}

/** The chart's CSIDriver (templates/driver.yaml) with examples/local-hostpath.yaml's values. */
export function democraticCsiDriver(
  options: { attachRequired?: boolean; storageCapacity?: boolean } = {},
): V1CSIDriver {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSIDriver",
    metadata: { name: DEMOCRATIC_DRIVER_NAME },
    spec: {
      attachRequired: options.attachRequired ?? false,
      podInfoOnMount: true,
      fsGroupPolicy: "File",
      storageCapacity: options.storageCapacity ?? true,
    },
  };
}

/** examples/local-hostpath.yaml's class, named `democratic-local`. */
export function democraticStorageClass(): V1StorageClass {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: DEMOCRATIC_STORAGE_CLASS },
    provisioner: DEMOCRATIC_DRIVER_NAME,
    reclaimPolicy: "Delete",
    allowVolumeExpansion: false,
    volumeBindingMode: "WaitForFirstConsumer",
    parameters: {},
  };
}

/** The directory of a volume: `<base>/v/<volume id>` (the volume id is the CreateVolume name). */
export function democraticVolumePath(baseDir: string, volumeId: string): string {
  return join(baseDir, "v", volumeId);
}

/** The directory of a filecopy snapshot: `<base>/s/<source volume id>-<snapshot name>`. */
export function democraticSnapshotPath(baseDir: string, dirName: string): string {
  return join(baseDir, "s", dirName);
}

async function directoryNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) if (entry.isDirectory) names.push(entry.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return names.sort();
}

/**
 * The volumes the driver holds: the directories under `<base>/v`. It keeps
 * no size (CreateVolume answers capacity_bytes 0), so sizeBytes is 0.
 */
export async function democraticVolumes(baseDir: string): Promise<DriverVolume[]> {
  return (await directoryNames(join(baseDir, "v"))).map((name) => ({
    id: name,
    name,
    kind: "local-hostpath",
    sizeBytes: 0,
  }));
}

/** The filecopy snapshots the driver holds, with the ids CreateSnapshot answered. */
export async function democraticSnapshots(
  baseDir: string,
): Promise<{ id: string; dirName: string }[]> {
  return (await directoryNames(join(baseDir, "s"))).map((dirName) => ({
    id: new URLSearchParams({ snapshot_driver: "filecopy", snapshot_id: dirName }).toString(),
    dirName,
  }));
}
