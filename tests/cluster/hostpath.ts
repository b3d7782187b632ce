/**
 * The upstream hostpath CSI driver (hostpathplugin, csi-driver-host-path
 * v1.18.0) as a fake node's driver: its command line, its CSIDriver object
 * and StorageClasses as upstream's deploy/kubernetes-distributed declares
 * them, the volumes it holds (its own state file), and the loop devices its
 * Block volumes leave attached.
 */

import type { V1CSIDriver, V1StorageClass } from "@kubernetes/client-node";
import { join } from "node:path";
import type { CapacityMap } from "./drivers.ts";
import { delay } from "./wait.ts";

export const HOSTPATH_DRIVER_NAME = "hostpath.csi.k8s.io";
/** The driver's NodeGetInfo segment key (pkg/hostpath/nodeserver.go, TopologyKeyNode). */
export const HOSTPATH_TOPOLOGY_KEY = "topology.hostpath.csi/node";
/**
 * `--v` of the driver. Upstream's DaemonSet runs it at 5, where
 * pkg/hostpath/server.go (logGRPCJson) logs every request as JSON with its
 * secrets unstripped; at 4 it logs each call's method and errors, no bodies.
 */
export const HOSTPATH_VERBOSITY = 4;

export interface HostpathOptions {
  /** unix:///... the driver listens on. */
  endpoint: string;
  node: string;
  stateDir: string;
  capacity: CapacityMap;
  /** `--v`; default HOSTPATH_VERBOSITY. */
  verbosity?: number;
  /** Appended (e.g. --enable-attach, --enable-controller-modify-volume, --maxvolumespernode=N). */
  extraArgs?: readonly string[];
}

/**
 * The hostpath container's args of upstream's distributed DaemonSet
 * (deploy/kubernetes-distributed/hostpath/csi-hostpath-plugin.yaml), with the
 * node's own socket, node id, pools and state directory (upstream keeps it in
 * the default /csi-data-dir, a hostPath volume).
 */
export function hostpathArgs(options: HostpathOptions): string[] {
  return [
    `--drivername=${HOSTPATH_DRIVER_NAME}`,
    `--v=${options.verbosity ?? HOSTPATH_VERBOSITY}`,
    `--endpoint=${options.endpoint}`,
    `--nodeid=${options.node}`,
    ...Object.entries(options.capacity).map(([kind, size]) => `--capacity=${kind}=${size}`),
    `--statedir=${options.stateDir}`,
    ...(options.extraArgs ?? []),
  ];
}

const UPSTREAM_LABELS = {
  "app.kubernetes.io/instance": HOSTPATH_DRIVER_NAME,
  "app.kubernetes.io/part-of": "csi-driver-host-path",
};

/**
 * Upstream's hostpath/csi-hostpath-driverinfo.yaml. `attachRequired` and
 * `storageCapacity` may be changed by a test; upstream has false and true.
 */
export function hostpathCsiDriver(
  options: { attachRequired?: boolean; storageCapacity?: boolean } = {},
): V1CSIDriver {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSIDriver",
    metadata: {
      name: HOSTPATH_DRIVER_NAME,
      labels: {
        ...UPSTREAM_LABELS,
        "app.kubernetes.io/name": HOSTPATH_DRIVER_NAME,
        "app.kubernetes.io/component": "csi-driver",
      },
    },
    spec: {
      volumeLifecycleModes: ["Persistent", "Ephemeral"],
      podInfoOnMount: true,
      attachRequired: options.attachRequired ?? false,
      storageCapacity: options.storageCapacity ?? true,
      fsGroupPolicy: "File",
    },
  };
}

/** Upstream's hostpath/csi-hostpath-storageclass-<kind>.yaml: `csi-hostpath-<kind>`. */
export function hostpathStorageClass(kind: string): V1StorageClass {
  const name = `csi-hostpath-${kind}`;
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: {
      name,
      labels: {
        ...UPSTREAM_LABELS,
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/component": "storageclass",
      },
    },
    provisioner: HOSTPATH_DRIVER_NAME,
    volumeBindingMode: "WaitForFirstConsumer",
    parameters: { kind },
  };
}

/** A volume as the driver holds it. */
export interface DriverVolume {
  id: string;
  name: string;
  /** The pool (`kind`) it was allocated from. */
  kind: string;
  sizeBytes: number;
  /** Raw block (hostpath only: a file with a loop device). */
  block?: boolean;
}

/** The driver's state file (pkg/state/state.go): what it keeps across restarts. */
interface HostpathState {
  Volumes?: {
    VolID: string;
    VolName: string;
    VolSize: number;
    Kind: string;
    VolAccessType: number;
  }[] | null;
  Snapshots?: { Id: string; Name: string; VolID: string; ReadyToUse: boolean }[] | null;
}

/**
 * The state file, read again while the driver rewrites it: it writes in
 * place (os.WriteFile), so a read may see a truncated file.
 */
async function readState(stateDir: string): Promise<HostpathState> {
  const path = join(stateDir, "state.json");
  for (let attempt = 1;; attempt++) {
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return {};
      throw error;
    }
    try {
      return JSON.parse(text) as HostpathState;
    } catch (error) {
      if (attempt >= 20) throw new Error(`${path} is not JSON after ${attempt} reads: ${error}`);
      await delay(20);
    }
  }
}

/** The volumes in the driver's state directory. */
export async function hostpathVolumes(stateDir: string): Promise<DriverVolume[]> {
  const state = await readState(stateDir);
  return (state.Volumes ?? []).map((volume) => ({
    id: volume.VolID,
    name: volume.VolName,
    kind: volume.Kind,
    sizeBytes: volume.VolSize,
    // state.BlockAccess
    block: volume.VolAccessType === 1,
  }));
}

/** The snapshots in the driver's state directory. */
export async function hostpathSnapshots(
  stateDir: string,
): Promise<{ id: string; name: string; volumeId: string; readyToUse: boolean }[]> {
  const state = await readState(stateDir);
  return (state.Snapshots ?? []).map((snapshot) => ({
    id: snapshot.Id,
    name: snapshot.Name,
    volumeId: snapshot.VolID,
    readyToUse: snapshot.ReadyToUse,
  }));
}

/**
 * Detaches every loop device whose backing file lies under `dir`. The driver
 * attaches one per Block volume (losetup, in CreateVolume) and detaches it
 * only in DeleteVolume, so volumes left at stop would keep their devices and
 * files busy. Returns the devices detached.
 */
export async function detachLoopDevices(dir: string): Promise<string[]> {
  const detached: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync("/sys/block")];
  } catch {
    return detached;
  }
  const prefix = dir.endsWith("/") ? dir : `${dir}/`;
  for (const entry of entries) {
    if (!entry.name.startsWith("loop")) continue;
    let backing: string;
    try {
      backing = (await Deno.readTextFile(`/sys/block/${entry.name}/loop/backing_file`)).trim();
    } catch {
      continue; // not attached
    }
    if (!backing.startsWith(prefix)) continue;
    const device = `/dev/${entry.name}`;
    const output = await new Deno.Command("losetup", {
      args: ["-d", device],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(
        `losetup -d ${device} (${backing}) failed: ${new TextDecoder().decode(output.stderr)}`,
      );
    }
    detached.push(device);
  }
  return detached;
}
