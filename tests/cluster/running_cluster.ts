/**
 * A started cluster: its nodes, drivers and agents, the admin's clients, and
 * the operations tests perform on it (identities, agents, logs, stop).
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { AgentHandle, type AgentKind, oursBinary } from "./agents.ts";
import type { ClusterBinaries } from "./build.ts";
import type { AgentRbac, ClusterOptions } from "./cluster.ts";
import { ClusterNode } from "./cluster_node.ts";
import type { ComponentControl } from "./component_control.ts";
import type { ControlPlane } from "./control_plane.ts";
import { type DriverKind, nodeDriverPaths, startNodeDriver, startRecorder } from "./drivers.ts";
import { detachLoopDevices } from "./hostpath.ts";
import { grantClusterAdmin, identityKubeconfig, type IdentityRef } from "./identity.ts";
import type { AdminClients } from "./kubeconfig.ts";
import { createFakeNode, fakeNodeNames } from "./nodes.ts";
import type { PeerBinaries } from "./peers.ts";
import {
  type ManagedProcess,
  type ProcessGroup,
  runCommand,
  type SpawnOptions,
} from "./process.ts";
import {
  agentUsernamePrefix,
  nodePolicyEnabled,
  nodePolicyManifest,
  tokenPod,
} from "./node_policy.ts";
import { grantUpstreamProvisionerRbac } from "./rbac.ts";
import { createClusterObjects, driverIdentity, storageClassName } from "./setup.ts";
import { startSnapshotting } from "./snapshots.ts";
import { StallingProxy } from "./stall_proxy.ts";

export { ClusterNode };

export interface StartAgentOptions {
  kind: AgentKind;
  /** Extra flags after --csi-address, --kubeconfig and --node-deployment. */
  args?: string[];
  /**
   * The agent's ServiceAccount; its namespace is also the agent's NAMESPACE.
   * Default: `csi-provisioner-<node>` in the cluster's agent namespace.
   */
  identity?: IdentityRef;
  /** Default "none" when `identity` is given (the test grants), else the cluster's agentRbac. */
  rbac?: AgentRbac;
  /** Override the binary (default: upstream's csi-provisioner or dist/csi-node-provisioner). */
  binary?: string;
  env?: Record<string, string>;
  /**
   * The API server URL of the agent's kubeconfig; default kube-apiserver
   * itself. Pass a proxy's `url` (cluster.startApiProxy()) to put it between.
   */
  apiServer?: string;
}

/** The peer programs a cluster runs: hostpathplugin, bin/democratic-csi, the snapshot controllers and CRDs. */
export type ClusterPeers = Partial<PeerBinaries> & {
  democraticBin?: string;
  snapshotCrds?: string[];
};

export interface ClusterInit {
  dir: string;
  ownsDir: boolean;
  group: ProcessGroup;
  binaries: ClusterBinaries;
  /** The peers the options need (hostpathplugin, democratic-csi, the snapshot controllers, their CRDs). */
  peers: ClusterPeers;
  controlPlane: ControlPlane;
  admin: AdminClients;
  options: ClusterOptions;
}

export type Cluster = RunningCluster;

export class RunningCluster implements AsyncDisposable {
  readonly dir: string;
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly caPem: string;
  /** kube-apiserver's audit log, when ClusterOptions.auditLog turned it on. */
  readonly auditLogPath: string | undefined;
  readonly admin: AdminClients;
  readonly binaries: ClusterBinaries;
  readonly driverKind: DriverKind;
  /** The CSI driver's name: hostpath.csi.k8s.io, org.democratic-csi.local-hostpath, or test.csi.k8s.io. */
  readonly driverName: string;
  /** The driver's topology key, a label of each fake node (its value: the node's name). */
  readonly topologyKey: string;
  readonly nodes: ClusterNode[];
  readonly agentNamespace: string;
  /** ms from the start of the control plane to a usable cluster. */
  startupMs = 0;
  /** ms from the start to each set-up stage, after the control plane's. */
  readonly timings: Record<string, number> = {};
  #init: ClusterInit;
  #stopping: Promise<void> | undefined;
  readonly #proxies: StallingProxy[] = [];

  constructor(init: ClusterInit) {
    this.#init = init;
    this.dir = init.dir;
    this.kubeconfigPath = init.controlPlane.adminKubeconfigPath;
    this.server = init.controlPlane.server;
    this.caPem = init.controlPlane.caPem;
    this.auditLogPath = init.controlPlane.auditLogPath;
    this.admin = init.admin;
    this.binaries = init.binaries;
    this.agentNamespace = init.options.agentNamespace ?? "csi-provisioner";
    this.driverKind = init.options.driver ?? "hostpath";
    ({ driverName: this.driverName, topologyKey: this.topologyKey } = driverIdentity(
      this.driverKind,
    ));
    const nodes = init.options.nodes ?? 2;
    const names = typeof nodes === "number" ? fakeNodeNames(nodes) : nodes;
    const recorded = this.driverKind !== "test" && this.driverKind !== "none" &&
      (init.options.driverOptions?.recordCalls ?? false);
    this.nodes = names.map((name, index) => {
      const paths = nodeDriverPaths(join(init.dir, "nodes", name), { recorded });
      return new ClusterNode({ name, index, kind: this.driverKind, paths });
    });
  }

  /** kube-apiserver: stop(), start() (same port and certificate), restart(), freeze(), thaw(). */
  get apiserver(): ComponentControl {
    return this.#init.controlPlane.apiserver;
  }

  /** etcd: stop(), start() (same port and data dir), restart(), freeze(), thaw(). */
  get etcd(): ComponentControl {
    return this.#init.controlPlane.etcd;
  }

  /**
   * A stalling proxy in front of kube-apiserver (stall_proxy.ts), terminating
   * TLS with kube-apiserver's own certificate so that agents started with
   * `apiServer: proxy.url` verify it with the cluster's CA. stop() closes it.
   */
  async startApiProxy(): Promise<StallingProxy> {
    const { servingCert, server } = this.#init.controlPlane;
    const target = new URL(server);
    const proxy = new StallingProxy({ hostname: target.hostname, port: Number(target.port) }, {
      tls: {
        certPem: await Deno.readTextFile(servingCert.certFile),
        keyPem: await Deno.readTextFile(servingCert.keyFile),
        caPem: this.caPem,
      },
    });
    this.#proxies.push(proxy);
    return proxy;
  }

  /**
   * The cluster's StorageClass of a driver pool: `csi-hostpath-<pool>`
   * (upstream's), `test-<pool>`, or democratic's one `democratic-local`.
   */
  storageClassName(pool: string): string {
    return storageClassName(this.driverKind, pool);
  }

  /**
   * Cluster objects, nodes, drivers and agents; called once by startCluster.
   * `started` (a performance.now() value) is what timings count from.
   */
  async setUp(started: number): Promise<void> {
    const { options } = this.#init;
    const mark = (name: string) => (this.timings[name] = Math.round(performance.now() - started));
    const driverKind = this.driverKind;
    await createClusterObjects(this.admin, {
      driverKind,
      attachRequired: options.attachRequired ?? false,
      csiDriver: options.csiDriver ?? true,
      storageCapacity: options.storageCapacity ?? true,
      storageClasses: options.storageClasses ?? true,
      driverOptions: options.driverOptions ?? {},
      nodes: this.nodes.map((node) => node.name),
      agentNamespace: this.agentNamespace,
    });
    if (this.nodePolicy) {
      const manifest = await nodePolicyManifest(agentUsernamePrefix(this.agentNamespace));
      await this.kubectl(["apply", "-f", "-"], { stdin: manifest });
    }
    await Promise.all(this.nodes.map((node) =>
      createFakeNode(this.admin, node.name, {
        driverName: this.driverName,
        topologyKey: this.topologyKey,
        withoutDriver: driverKind === "none",
      })
    ));
    mark("nodes");
    if (driverKind !== "none") {
      await Promise.all(this.nodes.map((node) => this.#startDriver(node)));
      mark("csi-drivers");
    }
    if (options.snapshots === true) {
      await this.startSnapshotting();
      mark("snapshots");
    }
    const agent = options.agent ?? "none";
    if (agent !== "none") {
      await Promise.all(
        this.nodes.map((node) =>
          this.startAgent(node, { kind: agent, args: options.agentArgs ?? [] })
        ),
      );
      mark("agents");
    }
  }

  /**
   * Stops the node's driver and starts another; `wipeState` empties its
   * state directory in between: a node that comes back without its disks.
   */
  async restartDriver(name: string, options: { wipeState?: boolean } = {}): Promise<void> {
    const node = this.node(name);
    await node.driver?.stop();
    if (options.wipeState) {
      await Deno.remove(node.stateDir, { recursive: true });
      await Deno.mkdir(node.stateDir, { recursive: true });
    }
    await this.#startDriver(node);
  }

  async #startDriver(node: ClusterNode): Promise<void> {
    const { options } = this.#init;
    node.driver = await startNodeDriver({
      group: this.#init.group,
      kind: this.driverKind,
      node: node.name,
      index: node.index,
      paths: node,
      logFile: this.#logFile(`csi-driver-${node.name}`),
      driver: options.driverOptions ?? {},
      ...(this.#init.peers.hostpathplugin
        ? { hostpathBinary: this.#init.peers.hostpathplugin }
        : {}),
      ...(this.#init.peers.democraticBin ? { democraticBin: this.#init.peers.democraticBin } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (node.driverSocket !== node.csiSocket) node.recorder = await startRecorder(node);
  }

  /**
   * The VolumeSnapshot CRDs, snapshot-controller, a csi-snapshotter per node
   * and the VolumeSnapshotClass: at start-up with `snapshots: true`, or on a
   * running cluster started with `snapshots: "later"`.
   */
  async startSnapshotting(): Promise<void> {
    const { peers, options, group } = this.#init;
    const driverKind = this.driverKind;
    if (driverKind !== "hostpath" && driverKind !== "democratic") {
      throw new Error(`snapshots need the hostpath or democratic driver, not "${driverKind}"`);
    }
    if (!peers.snapshotController || !peers.csiSnapshotter || !peers.snapshotCrds) {
      throw new Error("snapshots need the snapshot-controller and csi-snapshotter binaries");
    }
    await startSnapshotting({
      group,
      nodes: this.nodes,
      namespace: this.agentNamespace,
      kubectl: (args, kubectlOptions) => this.kubectl(args, kubectlOptions),
      identity: (ref) => this.identity(ref),
      grantClusterAdmin: (ref) => this.grantClusterAdmin(ref),
      logFile: (name) => this.#logFile(name),
      verbosity: Math.max(options.verbosity ?? 1, 2),
      driverKind,
      ...(options.signal ? { signal: options.signal } : {}),
    }, {
      snapshotController: peers.snapshotController,
      csiSnapshotter: peers.csiSnapshotter,
      crds: peers.snapshotCrds,
    });
  }

  /**
   * Starts another process in the cluster's group (stopped with the
   * cluster), logging to logs/NAME.log: a peer a test runs itself, such as
   * external-resizer.
   */
  spawnPeer(options: Omit<SpawnOptions, "logFile">): ManagedProcess {
    return this.#init.group.spawn({ ...options, logFile: this.#logFile(options.name) });
  }

  #logFile(name: string): string {
    return join(this.dir, "logs", `${name}.log`);
  }

  node(name: string): ClusterNode {
    const node = this.nodes.find((candidate) => candidate.name === name);
    if (!node) throw new Error(`no node ${name}; nodes: ${this.nodes.map((n) => n.name)}`);
    return node;
  }

  /**
   * A kubeconfig for the ServiceAccount (created if missing) with a
   * TokenRequest token; `server` names another API server URL (a proxy's).
   */
  async identity(
    ref: IdentityRef,
    options: { server?: string; fileSuffix?: string; boundPod?: { name: string; uid: string } } =
      {},
  ): Promise<string> {
    return await identityKubeconfig(
      {
        admin: this.admin,
        server: this.server,
        caPem: this.caPem,
        dir: join(this.dir, "identities"),
      },
      ref,
      options,
    );
  }

  /** Binds the ServiceAccount to cluster-admin: for tests that do not test RBAC. */
  async grantClusterAdmin(ref: IdentityRef): Promise<void> {
    await grantClusterAdmin(this.admin, ref);
  }

  /** Grants exactly upstream external-provisioner's rbac.yaml permissions. */
  async grantUpstreamProvisionerRbac(ref: IdentityRef): Promise<void> {
    await grantUpstreamProvisionerRbac(this.admin, ref);
  }

  /**
   * deploy/components/node-confinement applied, agents' tokens bound to a Pod
   * on their node (ClusterOptions.nodePolicy, or CLUSTER_NODE_POLICY=1).
   */
  get nodePolicy(): boolean {
    return nodePolicyEnabled(this.#init.options.nodePolicy);
  }

  /** Starts an agent on the node with its own identity; it replaces `node.agent`. */
  async startAgent(
    nodeOrName: ClusterNode | string,
    options: StartAgentOptions,
  ): Promise<AgentHandle> {
    const node = typeof nodeOrName === "string" ? this.node(nodeOrName) : nodeOrName;
    const identity = options.identity ??
      { namespace: this.agentNamespace, serviceAccount: `csi-provisioner-${node.name}` };
    const rbac = options.rbac ??
      (options.identity ? "none" : this.#init.options.agentRbac ?? "upstream");
    // With the node policy, the token is bound to a Pod on the node, as the kubelet's is.
    const boundPod = this.nodePolicy
      ? { boundPod: await tokenPod(this.admin, identity, node.name, options.env?.POD_NAME) }
      : {};
    const kubeconfigPath = await this.identity(identity, {
      ...boundPod,
      ...(options.apiServer ? { server: options.apiServer, fileSuffix: "proxied" } : {}),
    });
    if (rbac === "upstream") await this.grantUpstreamProvisionerRbac(identity);
    if (rbac === "cluster-admin") await this.grantClusterAdmin(identity);
    const binary = options.binary ??
      (options.kind === "upstream" ? this.binaries.csiProvisioner : oursBinary());
    if (!existsSync(binary)) {
      throw new Error(
        `agent binary ${binary} does not exist: run \`deno task compile\` ` +
          `or set CSI_NODE_PROVISIONER_BIN`,
      );
    }
    node.agent = new AgentHandle(this.#init.group, {
      kind: options.kind,
      binary,
      node: node.name,
      csiEndpoint: node.csiEndpoint,
      kubeconfigPath,
      namespace: identity.namespace,
      podName: `csi-provisioner-${node.name}`,
      args: options.args ?? [],
      logFile: this.#logFile(`agent-${node.name}`),
      ...(options.env ? { env: options.env } : {}),
    });
    return node.agent;
  }

  /** Every process's log file, in start order. */
  logs(): { name: string; pid: number; logFile: string; running: boolean }[] {
    return this.#init.group.processes.map((p) => ({
      name: p.name,
      pid: p.pid,
      logFile: p.logFile,
      running: p.running,
    }));
  }

  /** The last `lines` lines of every log, for a failed test to print. */
  async tailLogs(lines = 50): Promise<string> {
    return await this.#init.group.tailLogs(lines);
  }

  /** Runs kubectl as the admin; returns stdout, throws with stderr on failure. */
  async kubectl(args: string[], options: { stdin?: string } = {}): Promise<string> {
    return await runCommand(
      this.binaries.kubectl,
      [`--kubeconfig=${this.kubeconfigPath}`, ...args],
      options,
    );
  }

  /** Stops every process (last started first) and removes a temporary directory. Idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      for (const node of this.nodes) node.recorder?.close();
      // A frozen process would only die at the SIGKILL deadline.
      for (const component of [this.apiserver, this.etcd]) component.thaw();
      await Promise.all(this.#proxies.map((proxy) => proxy.close()));
      await this.#init.group.stopAll();
      // Block volumes left behind keep a loop device each (hostpath attaches them).
      if (this.driverKind === "hostpath") await detachLoopDevices(this.dir).catch(() => []);
      if (this.#init.ownsDir) await Deno.remove(this.dir, { recursive: true }).catch(() => {});
    })();
    return this.#stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
