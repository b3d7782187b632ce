/**
 * The compiled binary (dist/csi-node-provisioner) beside the project's test
 * CSI driver, each its own process on a real unix socket, against a real API
 * server: what the end-to-end tests of the binary start and stop.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IMAGE_ENV } from "../../deploy/image/image.ts";
import { oursBinary } from "../cluster/agents.ts";
import type { Cluster as RunningCluster } from "../cluster/cluster.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import { type ManagedProcess, spawnLogged } from "../cluster/process.ts";
import { waitFor } from "../cluster/wait.ts";
import { type SpawnedDriver, type SpawnOptions, spawnTestDriver } from "../csi_driver/spawn.ts";

export const BINARY: string = oursBinary();

export interface Running {
  dir: string;
  driver: SpawnedDriver;
  agent: ManagedProcess;
  url: string;
  log: () => string;
}

export function requireBinary(): void {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`deno task compile\` first`);
}

export async function startAgent(
  cluster: RunningCluster,
  options: {
    driverOverrides?: Partial<SpawnOptions>;
    args?: string[];
    /** Builds the kubeconfig from the agent's own (token) kubeconfig, in the start's directory. */
    kubeconfig?: (tokenKubeconfig: string, dir: string) => string;
  } = {},
): Promise<Running> {
  requireBinary();
  const dir = mkdtempSync(join(tmpdir(), "agent-e2e-"));
  const driver = await spawnTestDriver({
    endpoint: `unix://${join(dir, "csi.sock")}`,
    controlEndpoint: `unix://${join(dir, "control.sock")}`,
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "10Gi" }],
    ...options.driverOverrides,
  });
  const port = freeLoopbackPort();
  const tokenKubeconfig = await agentKubeconfig(cluster);
  const kubeconfig = options.kubeconfig?.(tokenKubeconfig, dir) ?? tokenKubeconfig;
  const logFile = join(dir, "agent.log");
  const agent = spawnLogged({
    name: "csi-node-provisioner",
    command: BINARY,
    args: [
      "--node-deployment",
      `--csi-address=${join(dir, "csi.sock")}`,
      `--http-endpoint=127.0.0.1:${port}`,
      "-v=5",
      `--kubeconfig=${kubeconfig}`,
      ...(options.args ?? []),
    ],
    logFile,
    // The image's environment, as a pod of the image would have it.
    env: { ...IMAGE_ENV, NODE_NAME: "node-a" },
  });
  const log = () => existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
  return { dir, driver, agent, url: `http://127.0.0.1:${port}`, log };
}

/** The agent's ServiceAccount, allowed everything (RBAC is tested elsewhere). */
export async function agentKubeconfig(cluster: RunningCluster): Promise<string> {
  const identity = { namespace: "default", serviceAccount: "e2e-agent" };
  await cluster.grantClusterAdmin(identity);
  return await cluster.identity(identity);
}

export async function cleanUp(running: Running): Promise<void> {
  await running.agent.stop({ graceMs: 2000 });
  await running.driver.stop();
  rmSync(running.dir, { recursive: true, force: true });
}

export async function waitReady(running: Running): Promise<void> {
  await waitFor(async () => {
    if (!running.agent.running) throw new Error(`agent exited:\n${running.log()}`);
    const response = await fetch(`${running.url}/readyz`);
    await response.body?.cancel();
    return response.status === 200;
  }, { description: "the agent to become ready", timeoutMs: 20_000 });
}
