/**
 * startCluster(): a real local Kubernetes control plane with fake nodes, one
 * real CSI driver per node and optionally one provisioner agent per node.
 * Everything it starts is stopped by stop() (or `await using`), last started
 * first, and a temporary directory it created is removed.
 */

import { resolve } from "node:path";
import { type AgentKind } from "./agents.ts";
import type { AuditLogOptions } from "./audit.ts";
import { type ClusterBinaries, ensureClusterBinaries } from "./build.ts";
import { type ClusterPeers, RunningCluster } from "./running_cluster.ts";
import { startControlPlane } from "./control_plane.ts";
import type { DriverKind, DriverOptions } from "./drivers.ts";
import { ensureDemocratic } from "./democratic_install.ts";
import { detachLoopDevices } from "./hostpath.ts";
import type { IdentityRef } from "./identity.ts";
import { clientsFromKubeconfig } from "./kubeconfig.ts";
import { ensurePeerBinaries, snapshotCrdPaths } from "./peers.ts";
import { ProcessGroup } from "./process.ts";

export type { Cluster, ClusterNode, StartAgentOptions } from "./running_cluster.ts";
export type { AgentKind, AuditLogOptions, DriverKind, DriverOptions, IdentityRef };

/** What a default agent identity is allowed to do. */
export type AgentRbac = "upstream" | "cluster-admin" | "none";

export interface ClusterOptions {
  /** A count (named node-a, node-b, ...) or the names. Default 2. */
  nodes?: number | string[];
  /**
   * Default "hostpath": upstream's hostpath driver, built from its archive
   * (peers.ts). "democratic": democratic-csi's local-hostpath driver,
   * installed from its archive (democratic_install.ts). "test": the
   * project's test driver, for fault injection.
   */
  driver?: DriverKind;
  driverOptions?: DriverOptions;
  /** CSIDriver.spec.attachRequired. Default false. */
  attachRequired?: boolean;
  /**
   * CSIDriver.spec.storageCapacity. Default true: the scheduler then places a
   * pod only where published CSIStorageCapacity fits its claims.
   */
  storageCapacity?: boolean;
  /**
   * Create the driver's CSIDriver object. Default true; false when the test
   * applies its own (e.g. deploy/'s).
   */
  csiDriver?: boolean;
  /**
   * Create a WaitForFirstConsumer class per driver pool: upstream's
   * `csi-hostpath-<pool>`, or `test-<pool>` for the test driver. Default true.
   */
  storageClasses?: boolean;
  /** Start one agent per node. Default "none". */
  agent?: "none" | AgentKind;
  /** Extra flags for those agents. */
  agentArgs?: string[];
  /** Permissions of those agents' ServiceAccounts. Default "upstream" (upstream's rbac.yaml). */
  agentRbac?: AgentRbac;
  /**
   * Apply deploy/components/node-confinement's policy (to the agents'
   * accounts, `csi-provisioner-<node>`) and bind each agent's token to a Pod
   * on its node. Default: CLUSTER_NODE_POLICY=1 in the environment.
   */
  nodePolicy?: boolean;
  /** Namespace of the agents' ServiceAccounts and capacity objects. Default "csi-provisioner". */
  agentNamespace?: string;
  /** Keep state here instead of a temporary directory (which stop() removes). */
  dir?: string;
  /** Aborts start-up; after start-up, aborting stops the cluster. */
  signal?: AbortSignal;
  /** Progress and timing lines; default stderr. */
  log?: (line: string) => void;
  /** -v of the Kubernetes components. Default 1. */
  verbosity?: number;
  /**
   * kube-apiserver's audit log (Metadata level) of these users' requests, in
   * DIR/logs/audit.log (RunningCluster.auditLogPath). Default off.
   */
  auditLog?: AuditLogOptions;
  /** Extra kube-apiserver flags, e.g. `--watch-cache=false` (watches then read etcd directly). */
  apiServerArgs?: string[];
  /**
   * kube-controller-manager's controllers. Default control_plane.ts
   * CONTROLLERS; a test that must see the agent without the PV controller
   * leaves "persistentvolume-binder-controller" out.
   */
  controllers?: readonly string[];
  /**
   * VolumeSnapshot CRDs, snapshot-controller and a csi-snapshotter per node
   * (snapshots.ts); hostpath and democratic drivers. Default false. "later": built but
   * not started, for a test that installs them on a running cluster
   * (RunningCluster.startSnapshotting()).
   */
  snapshots?: boolean | "later";
  /** Skip ensureClusterBinaries(). */
  binaries?: ClusterBinaries;
}

/** Subdirectories a previous run in the same --dir leaves; wiped at start. */
const STATE_SUBDIRS = ["etcd", "pki", "nodes", "logs", "kubeconfigs", "identities"];

async function prepareDir(dir: string | undefined): Promise<{ dir: string; owned: boolean }> {
  if (dir === undefined) {
    return { dir: await Deno.makeTempDir({ prefix: "csi-cluster-" }), owned: true };
  }
  const absolute = resolve(dir);
  await Deno.mkdir(absolute, { recursive: true });
  // A previous run killed with Block volumes left their loop devices attached.
  await detachLoopDevices(absolute);
  for (const sub of STATE_SUBDIRS) {
    await Deno.remove(`${absolute}/${sub}`, { recursive: true }).catch(() => {});
  }
  return { dir: absolute, owned: false };
}

export async function startCluster(options: ClusterOptions = {}): Promise<RunningCluster> {
  const log = options.log ?? ((line: string) => console.error(line));
  const signal = options.signal;
  const binaries = options.binaries ??
    await ensureClusterBinaries({ log, ...(signal ? { signal } : {}) });
  const peers = await peersFor(options, log);
  const started = performance.now();
  const { dir, owned } = await prepareDir(options.dir);
  const group = new ProcessGroup();
  try {
    const controlPlane = await startControlPlane({
      binaries,
      group,
      dir,
      ...(options.verbosity === undefined ? {} : { verbosity: options.verbosity }),
      ...(options.auditLog ? { auditLog: options.auditLog } : {}),
      ...(options.apiServerArgs ? { apiServerArgs: options.apiServerArgs } : {}),
      ...(options.controllers ? { controllers: options.controllers } : {}),
      ...(signal ? { signal } : {}),
    });
    const cluster = new RunningCluster({
      dir,
      ownsDir: owned,
      group,
      binaries,
      peers,
      controlPlane,
      admin: clientsFromKubeconfig(controlPlane.adminKubeconfigPath),
      options,
    });
    await cluster.setUp(started);
    cluster.startupMs = Math.round(performance.now() - started);
    const timings = Object.entries({ ...controlPlane.timings, ...cluster.timings })
      .map(([name, ms]) => `${name} ${(ms / 1000).toFixed(1)}s`).join(", ");
    log(`[cluster] started in ${(cluster.startupMs / 1000).toFixed(1)} s (ready at: ${timings})`);
    signal?.addEventListener("abort", () => void cluster.stop(), { once: true });
    return cluster;
  } catch (error) {
    const tails = await group.tailLogs(20);
    await group.stopAll({ graceMs: 2_000 });
    await detachLoopDevices(dir).catch(() => []);
    if (owned) await Deno.remove(dir, { recursive: true }).catch(() => {});
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`starting the cluster failed: ${message}\n${tails}`, { cause: error });
  }
}

/** The peers the options need, built or installed from their archives when missing. */
async function peersFor(
  options: ClusterOptions,
  log: (line: string) => void,
): Promise<ClusterPeers> {
  const signal = options.signal ? { signal: options.signal } : {};
  const democratic = options.driver === "democratic"
    ? { democraticBin: (await ensureDemocratic({ log, ...signal })).bin }
    : {};
  const hostpath = (options.driver ?? "hostpath") === "hostpath";
  const snapshotter = (options.snapshots ?? false) !== false;
  if (!hostpath && !snapshotter) return democratic;
  const peers = await ensurePeerBinaries({ hostpath, snapshotter, log, ...signal });
  return {
    ...peers,
    ...democratic,
    ...(snapshotter ? { snapshotCrds: snapshotCrdPaths(Deno.env.toObject()) } : {}),
  };
}
