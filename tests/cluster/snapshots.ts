/**
 * Volume snapshots on the test cluster, as csi-driver-host-path's
 * distributed deployment does them: the three VolumeSnapshot CRDs of
 * external-snapshotter, one snapshot-controller for the cluster with
 * --enable-distributed-snapshotting, and on every node a csi-snapshotter in
 * --node-deployment mode on that node's driver socket (hostpath or
 * democratic-csi), plus a VolumeSnapshotClass for the driver.
 *
 * Both run with a ServiceAccount bound to cluster-admin: their upstream RBAC
 * files are not part of the source archive, and they are not under test.
 */

import type { AdminClients } from "./kubeconfig.ts";
import { freeLoopbackPort } from "./ports.ts";
import type { ClusterNode } from "./cluster_node.ts";
import { DEMOCRATIC_DRIVER_NAME, DEMOCRATIC_SNAPSHOT_CLASS } from "./democratic.ts";
import { HOSTPATH_DRIVER_NAME } from "./hostpath.ts";
import type { IdentityRef } from "./identity.ts";
import { type ManagedProcess, type ProcessGroup, tailFile } from "./process.ts";
import { waitFor } from "./wait.ts";

/** The class name of upstream's deploy/kubernetes-*\/hostpath/csi-hostpath-snapshotclass.yaml. */
export const SNAPSHOT_CLASS = "csi-hostpath-snapclass";

export interface SnapshotBinaries {
  snapshotController: string;
  csiSnapshotter: string;
  /** The three CRD files. */
  crds: string[];
}

/** What snapshot set-up needs of the running cluster. */
export interface SnapshotHost {
  group: ProcessGroup;
  nodes: readonly ClusterNode[];
  namespace: string;
  kubectl(args: string[], options?: { stdin?: string }): Promise<string>;
  identity(ref: IdentityRef): Promise<string>;
  grantClusterAdmin(ref: IdentityRef): Promise<void>;
  logFile(name: string): string;
  verbosity: number;
  /** Whose VolumeSnapshotClass to create. */
  driverKind: SnapshotDriverKind;
  signal?: AbortSignal;
}

/** The drivers the snapshot controllers run with. */
export type SnapshotDriverKind = "hostpath" | "democratic";

/** The cluster's VolumeSnapshotClass name for the driver. */
export function snapshotClassName(kind: SnapshotDriverKind): string {
  return kind === "democratic" ? DEMOCRATIC_SNAPSHOT_CLASS : SNAPSHOT_CLASS;
}

/** democratic-csi's chart templates/snapshot-classes.yaml, with deletionPolicy Delete. */
export function democraticSnapshotClass(): Record<string, unknown> {
  return {
    apiVersion: "snapshot.storage.k8s.io/v1",
    kind: "VolumeSnapshotClass",
    metadata: { name: DEMOCRATIC_SNAPSHOT_CLASS },
    driver: DEMOCRATIC_DRIVER_NAME,
    deletionPolicy: "Delete",
    parameters: {},
  };
}

export function volumeSnapshotClass(): Record<string, unknown> {
  return {
    apiVersion: "snapshot.storage.k8s.io/v1",
    kind: "VolumeSnapshotClass",
    metadata: {
      name: SNAPSHOT_CLASS,
      labels: {
        "app.kubernetes.io/instance": HOSTPATH_DRIVER_NAME,
        "app.kubernetes.io/part-of": "csi-driver-host-path",
        "app.kubernetes.io/name": SNAPSHOT_CLASS,
        "app.kubernetes.io/component": "volumesnapshotclass",
      },
    },
    driver: HOSTPATH_DRIVER_NAME,
    deletionPolicy: "Delete",
  };
}

async function kubeconfigFor(host: SnapshotHost, serviceAccount: string): Promise<string> {
  const ref = { namespace: host.namespace, serviceAccount };
  const path = await host.identity(ref);
  await host.grantClusterAdmin(ref);
  return path;
}

/** Waits until the process's metrics endpoint answers; fails with its log if it exits first. */
async function waitServing(process: ManagedProcess, port: number, signal?: AbortSignal) {
  const outcome = await waitFor(async () => {
    if (!process.running) return "exited";
    const response = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
    await response?.body?.cancel();
    return response?.ok ? "ready" : undefined;
  }, {
    description: `${process.name} to serve http://127.0.0.1:${port}/metrics`,
    timeoutMs: 60_000,
    ...(signal ? { signal } : {}),
  });
  if (outcome === "exited") {
    throw new Error(
      `${process.name} exited (code ${process.status?.code}); log ${process.logFile}:\n` +
        await tailFile(process.logFile, 30),
    );
  }
}

/** CRDs, snapshot-controller, a csi-snapshotter per node and the VolumeSnapshotClass. */
export async function startSnapshotting(
  host: SnapshotHost,
  binaries: SnapshotBinaries,
): Promise<{ controller: ManagedProcess }> {
  for (const crd of binaries.crds) await host.kubectl(["create", "-f", crd]);
  await host.kubectl([
    "wait",
    "--for=condition=Established",
    "--timeout=60s",
    ...binaries.crds.flatMap((crd) => ["-f", crd]),
  ]);
  const controllerKubeconfig = await kubeconfigFor(host, "snapshot-controller");
  const port = freeLoopbackPort();
  const controller = host.group.spawn({
    name: "snapshot-controller",
    command: binaries.snapshotController,
    args: [
      `--kubeconfig=${controllerKubeconfig}`,
      "--enable-distributed-snapshotting",
      `--http-endpoint=127.0.0.1:${port}`,
      `--v=${host.verbosity}`,
    ],
    logFile: host.logFile("snapshot-controller"),
    env: { KUBECONFIG: controllerKubeconfig },
  });
  const ready = [waitServing(controller, port, host.signal)];
  for (const node of host.nodes) {
    const kubeconfig = await kubeconfigFor(host, `csi-snapshotter-${node.name}`);
    const nodePort = freeLoopbackPort();
    node.snapshotter = host.group.spawn({
      name: `csi-snapshotter ${node.name}`,
      command: binaries.csiSnapshotter,
      args: [
        `--csi-address=${node.driverSocket}`,
        `--kubeconfig=${kubeconfig}`,
        "--node-deployment",
        `--http-endpoint=127.0.0.1:${nodePort}`,
        `--v=${host.verbosity}`,
      ],
      logFile: host.logFile(`csi-snapshotter-${node.name}`),
      env: { NODE_NAME: node.name, KUBECONFIG: kubeconfig },
    });
    ready.push(waitServing(node.snapshotter, nodePort, host.signal));
  }
  await Promise.all(ready);
  const snapshotClass = host.driverKind === "democratic"
    ? democraticSnapshotClass()
    : volumeSnapshotClass();
  await host.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(snapshotClass) });
  return { controller };
}

/** A VolumeSnapshot's fields a test looks at. */
export interface VolumeSnapshotObject {
  metadata: { name: string; namespace: string; uid?: string };
  spec: { volumeSnapshotClassName?: string; source: { persistentVolumeClaimName: string } };
  status?: {
    readyToUse?: boolean;
    boundVolumeSnapshotContentName?: string;
    restoreSize?: string;
    error?: { message?: string };
  };
}

/** Creates a VolumeSnapshot of the claim in the cluster's VolumeSnapshotClass (default hostpath's). */
export async function createVolumeSnapshot(
  admin: AdminClients,
  options: { namespace: string; name: string; claim: string; snapshotClass?: string },
): Promise<void> {
  await admin.objects.create({
    apiVersion: "snapshot.storage.k8s.io/v1",
    kind: "VolumeSnapshot",
    metadata: { name: options.name, namespace: options.namespace },
    spec: {
      volumeSnapshotClassName: options.snapshotClass ?? SNAPSHOT_CLASS,
      source: { persistentVolumeClaimName: options.claim },
    },
  });
}

/** Reads a VolumeSnapshot or VolumeSnapshotContent as plain JSON. */
export async function readSnapshotObject<T>(
  admin: AdminClients,
  ref: { kind: "VolumeSnapshot" | "VolumeSnapshotContent"; name: string; namespace?: string },
): Promise<T> {
  const object = await admin.objects.read({
    apiVersion: "snapshot.storage.k8s.io/v1",
    kind: ref.kind,
    metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
  });
  return JSON.parse(JSON.stringify(object)) as T;
}

/** Waits until the snapshot is readyToUse. */
export async function waitForSnapshotReady(
  admin: AdminClients,
  ref: { namespace: string; name: string },
  timeoutMs = 60_000,
): Promise<VolumeSnapshotObject> {
  return await waitFor(async () => {
    const snapshot = await readSnapshotObject<VolumeSnapshotObject>(admin, {
      kind: "VolumeSnapshot",
      ...ref,
    });
    return snapshot.status?.readyToUse === true ? snapshot : undefined;
  }, { description: `VolumeSnapshot ${ref.namespace}/${ref.name} readyToUse`, timeoutMs });
}
