/**
 * Starting one agent (ours or upstream) on a cluster node with the flags both
 * get, and telling when it is ready, the same way for both: from its log.
 * - ours: "Informers synced; provisioning claims ...", written after the CSI
 *   handshake and the informers' sync, as its workers start; GET /readyz must
 *   then answer 200 (checked, not timed);
 * - upstream: "Started provisioner controller", which
 *   sig-storage-lib-external-provisioner writes after its informers synced
 *   and its workers started.
 * Either way "ready" means: caches synced, claims are being worked on.
 * Ours is not timed by polling /readyz: serving a probe every 5 ms during
 * start-up cost it CPU that upstream, read from its log, never paid.
 */
import { type AgentHandle, oursBinary } from "../tests/cluster/agents.ts";
import type { AgentRbac } from "../tests/cluster/cluster.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { freeLoopbackPort } from "../tests/cluster/ports.ts";
import { tailFile } from "../tests/cluster/process.ts";
import { delay } from "../tests/cluster/wait.ts";
import { LogFollower } from "./log_follower.ts";
import { freshCopy } from "./page_cache.ts";
import type { BenchAgent } from "./report.ts";

/** Written by upstream once its informers synced and its workers run. */
export const UPSTREAM_READY_LINE = "Started provisioner controller";
/** Written by ours once the CSI handshake is done and its informers synced (main.ts). */
export const OURS_READY_LINE = "Informers synced; provisioning claims";
/** After its ready line, ours' /readyz must answer 200 within this long. */
const READYZ_AFTER_LINE_MS = 5_000;

/** How often readiness is probed: the resolution of the ready times. */
const PROBE_INTERVAL_MS = 5;

export interface AgentFlagOptions {
  /** --kube-api-qps and --kube-api-burst; the upstream defaults are 5 and 10. */
  qps: number;
  burst: number;
  httpPort: number;
}

/**
 * The flags both agents get, beyond the harness's --csi-address, --kubeconfig
 * and --node-deployment: the node deployment's topology flags and upstream's
 * defaults spelled out, so that a changed default cannot skew the comparison.
 */
export function agentFlags(options: AgentFlagOptions): string[] {
  return [
    "--feature-gates=Topology=true",
    "--strict-topology=true",
    "--immediate-topology=false",
    "--worker-threads=100",
    "--timeout=10s",
    "--retry-interval-start=1s",
    "--retry-interval-max=5m",
    `--kube-api-qps=${options.qps}`,
    `--kube-api-burst=${options.burst}`,
    `--http-endpoint=127.0.0.1:${options.httpPort}`,
  ];
}

/** An agent process being measured. */
export interface LaunchedAgent {
  kind: BenchAgent;
  handle: AgentHandle;
  pid: number;
  httpPort: number;
  /** performance.now() right after the process was spawned. */
  startedAt: number;
  /** Its log from this start on (the harness appends restarts to the same file). */
  log: LogFollower;
}

/**
 * Starts the agent on the node with agentFlags() (then `extraArgs`) and
 * upstream's RBAC, from a fresh copy of its binary (page_cache.ts).
 */
export async function launchAgent(
  cluster: RunningCluster,
  options: {
    kind: BenchAgent;
    node: string;
    qps: number;
    burst: number;
    extraArgs?: string[];
    /** Default "upstream": upstream's rbac.yaml. */
    rbac?: AgentRbac;
    /**
     * A copy made beforehand by freshAgentBinary(), for a caller that times
     * the launch itself: the copy is then not in its time. Default: one made here.
     */
    binary?: string;
  },
): Promise<LaunchedAgent> {
  const httpPort = freeLoopbackPort();
  const node = cluster.node(options.node);
  // The harness appends every start on a node to one file (its naming is
  // private): remember where this start begins, and check the guess below.
  const logFile = `${cluster.dir}/logs/agent-${node.name}.log`;
  const log = await LogFollower.fromEnd(logFile);
  const binary = options.binary ?? await freshAgentBinary(cluster, options.kind);
  const handle = await cluster.startAgent(node, {
    kind: options.kind,
    binary,
    rbac: options.rbac ?? "upstream",
    args: [
      ...agentFlags({ qps: options.qps, burst: options.burst, httpPort }),
      ...options.extraArgs ?? [],
    ],
  });
  // startAgent spawns synchronously just before it returns: this is the start.
  const startedAt = performance.now();
  if (handle.logFile !== logFile) {
    throw new Error(`the agent logs to ${handle.logFile}, not ${logFile}: update launchAgent()`);
  }
  return { kind: options.kind, handle, pid: handle.pid, httpPort, startedAt, log };
}

/**
 * A fresh, synced copy of the agent's binary (page_cache.ts). Ours is about
 * 118 MB and upstream's 70 MB, so copying takes each a different time.
 */
export function freshAgentBinary(cluster: RunningCluster, kind: BenchAgent): Promise<string> {
  const built = kind === "upstream" ? cluster.binaries.csiProvisioner : oursBinary();
  return freshCopy(built, `${cluster.dir}/agent-binaries`);
}

async function answers(url: string): Promise<number | undefined> {
  try {
    const response = await fetch(url);
    await response.body?.cancel();
    return response.status;
  } catch {
    return undefined;
  }
}

/** Ours' /readyz answers 200 soon after its ready line, or the line does not mean ready. */
async function readyzAnswers(base: string, agent: LaunchedAgent): Promise<void> {
  const deadline = performance.now() + READYZ_AFTER_LINE_MS;
  while (performance.now() < deadline) {
    if (await answers(`${base}/readyz`) === 200) return;
    await delay(PROBE_INTERVAL_MS);
  }
  throw new Error(
    `ours (pid ${agent.pid}) logged "${OURS_READY_LINE}" but /readyz did not answer 200 ` +
      `within ${READYZ_AFTER_LINE_MS} ms`,
  );
}

/** ms from the start to each readiness milestone. */
export interface ReadyTimes {
  /** The HTTP endpoint answers at all (GET /metrics, any status). */
  httpMs: number;
  /** Caches synced: the ready line in the agent's log (OURS_READY_LINE, UPSTREAM_READY_LINE). */
  readyMs: number;
}

/** Probes until the agent is ready; throws with its log tail if it exits or times out. */
export async function waitAgentReady(
  agent: LaunchedAgent,
  /** probeIntervalMs: default PROBE_INTERVAL_MS; coarser when many agents are probed at once. */
  options: { timeoutMs: number; probeIntervalMs?: number },
): Promise<ReadyTimes> {
  const deadline = agent.startedAt + options.timeoutMs;
  const base = `http://127.0.0.1:${agent.httpPort}`;
  let httpMs: number | undefined;
  while (performance.now() < deadline) {
    if (!agent.handle.running) break;
    const now = performance.now();
    if (httpMs === undefined && await answers(`${base}/metrics`) !== undefined) {
      httpMs = now - agent.startedAt;
    }
    const line = agent.kind === "ours" ? OURS_READY_LINE : UPSTREAM_READY_LINE;
    if (await agent.log.contains(line)) {
      const readyMs = performance.now() - agent.startedAt;
      if (agent.kind === "ours") await readyzAnswers(base, agent);
      return { httpMs: httpMs ?? readyMs, readyMs };
    }
    await delay(options.probeIntervalMs ?? PROBE_INTERVAL_MS);
  }
  const state = agent.handle.running ? "not ready in time" : "exited";
  throw new Error(
    `${agent.kind} agent (pid ${agent.pid}) ${state}; log:\n${await tailFile(
      agent.handle.logFile,
      30,
    )}`,
  );
}
