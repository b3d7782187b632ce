/**
 * Per-node provisioner agents: this project's compiled binary ("ours") or
 * upstream csi-provisioner ("upstream"). Both are launched by the same code
 * with the same flags and environment; only the binary differs.
 */

import { join } from "node:path";
import { IMAGE_ENV } from "../../deploy/image/image.ts";
import { REPO_ROOT } from "./drivers.ts";
import { type ManagedProcess, type ProcessGroup, type StopOptions } from "./process.ts";

export type AgentKind = "ours" | "upstream";

/**
 * The provisioner flags of csi-driver-host-path's deploy/kubernetes-distributed
 * DaemonSet, except the capacity owner: no agent Pod exists here, so no owner
 * reference (-1) unless a test creates the Pod and passes its own level.
 */
export const NODE_DEPLOYMENT_ARGS: readonly string[] = [
  "--feature-gates=Topology=true",
  "--enable-capacity",
  "--capacity-ownerref-level=-1",
  "--strict-topology=true",
  "--immediate-topology=false",
  "--worker-threads=5",
];

/** Where `deno task compile` puts the agent; CSI_NODE_PROVISIONER_BIN overrides it. */
export function oursBinary(env: Record<string, string | undefined> = Deno.env.toObject()): string {
  return env.CSI_NODE_PROVISIONER_BIN || join(REPO_ROOT, "dist", "csi-node-provisioner");
}

export interface AgentLaunch {
  kind: AgentKind;
  binary: string;
  node: string;
  /** unix:///... of the node's CSI driver. */
  csiEndpoint: string;
  kubeconfigPath: string;
  /** The agent's NAMESPACE: where it publishes CSIStorageCapacity objects. */
  namespace: string;
  /** The agent's POD_NAME (no such Pod exists unless a test creates it). */
  podName: string;
  /** Appended after the standard flags. */
  args: string[];
  logFile: string;
  /** Added to the environment, after the standard variables. */
  env?: Record<string, string>;
}

/** Command line of an agent: what a DaemonSet pod of upstream's node deployment passes. */
export function agentArgs(launch: AgentLaunch): string[] {
  return [
    `--csi-address=${launch.csiEndpoint}`,
    `--kubeconfig=${launch.kubeconfigPath}`,
    "--node-deployment",
    ...launch.args,
  ];
}

/**
 * The environment of an agent's process: the image's (its allocator's
 * settings, which upstream's Go binary ignores), then what the DaemonSet sets.
 */
export function agentEnv(launch: AgentLaunch): Record<string, string> {
  return {
    ...IMAGE_ENV,
    NODE_NAME: launch.node,
    NAMESPACE: launch.namespace,
    POD_NAME: launch.podName,
    // Upstream lets KUBECONFIG override --kubeconfig: never inherit the user's.
    KUBECONFIG: launch.kubeconfigPath,
    ...launch.env,
  };
}

/** One running agent, which a test may stop, kill and restart at will. */
export class AgentHandle {
  readonly launch: AgentLaunch;
  #group: ProcessGroup;
  #process: ManagedProcess;
  #starts = 1;

  constructor(group: ProcessGroup, launch: AgentLaunch) {
    this.#group = group;
    this.launch = launch;
    this.#process = this.#spawn();
  }

  #spawn(): ManagedProcess {
    return this.#group.spawn({
      name: `agent ${this.launch.kind} ${this.launch.node}`,
      command: this.launch.binary,
      args: agentArgs(this.launch),
      logFile: this.launch.logFile,
      env: agentEnv(this.launch),
    });
  }

  get kind(): AgentKind {
    return this.launch.kind;
  }

  get node(): string {
    return this.launch.node;
  }

  /** The current process (a new one after each restart). */
  get process(): ManagedProcess {
    return this.#process;
  }

  get pid(): number {
    return this.#process.pid;
  }

  get logFile(): string {
    return this.launch.logFile;
  }

  get running(): boolean {
    return this.#process.running;
  }

  /** SIGTERM, then SIGKILL after the grace period. */
  async stop(options?: StopOptions): Promise<Deno.CommandStatus> {
    return await this.#process.stop(options);
  }

  /** SIGKILL: a crash, as far as the cluster can tell. */
  async kill(): Promise<Deno.CommandStatus> {
    return await this.#process.kill();
  }

  /** Stops the agent if it runs, then starts it again with the same command line. */
  async restart(options?: StopOptions): Promise<void> {
    await this.#process.stop(options);
    this.#starts++;
    this.#process = await this.#group.respawn(this.#process, `restart #${this.#starts - 1}`);
  }
}
