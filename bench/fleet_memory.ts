/**
 * Whether a fleet fits this machine's memory, before a run starts it: 50
 * agents, 50 drivers and a control plane on a shared 24 GiB machine could
 * exhaust it, and an agent killed by the kernel half-way through would make a
 * run that measures nothing. The estimate is linear in the number of nodes,
 * from the memory the scenario measured at 5 and 10 nodes (bench/README.md).
 */
import { readFileSync } from "node:fs";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import type { LaunchedAgent } from "./agent_runner.ts";
import { residentMiB } from "./process_stats.ts";

/**
 * etcd, kube-apiserver, kube-controller-manager, kube-scheduler (about 460 MiB
 * VmRSS at 5 nodes) and the benchmark itself (about 260 MiB), rounded up.
 */
const BASE_MIB = 800;
/**
 * Per node, measured at 5 and 10 nodes (VmRSS at every claim Bound): the
 * larger agent (ours, 87 MiB; upstream 66), the hostpath driver (19 MiB) and
 * the control plane's growth (11 MiB per node), rounded up.
 */
const PER_NODE_MIB = 130;
/** Left for everything else on the machine. */
const SPARE_MIB = 2_048;

/** MemAvailable of /proc/meminfo, in MiB. */
export function availableMiB(meminfo = readFileSync("/proc/meminfo", "utf8")): number {
  const match = /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo);
  if (match === null) throw new Error("no MemAvailable in /proc/meminfo");
  return Number(match[1]) / 1024;
}

/** MiB a fleet of `nodes` needs, by the linear estimate. */
export function fleetNeedsMiB(nodes: number): number {
  return BASE_MIB + nodes * PER_NODE_MIB + SPARE_MIB;
}

/** The most nodes whose fleet fits in `available` MiB. */
export function largestFleet(available: number): number {
  return Math.max(0, Math.floor((available - BASE_MIB - SPARE_MIB) / PER_NODE_MIB));
}

/** Throws, naming the memory, when the fleet would not fit in what is available now. */
export function assertFleetFits(nodes: number, available = availableMiB()): void {
  const needs = fleetNeedsMiB(nodes);
  if (needs <= available) return;
  const gib = (mib: number) => (mib / 1024).toFixed(1);
  throw new Error(
    `fleet: ${nodes} nodes need about ${gib(needs)} GiB (${BASE_MIB} MiB for the control ` +
      `plane and the benchmark + ${PER_NODE_MIB} MiB per node for its agent, hostpath driver ` +
      `and API server share + ${SPARE_MIB} MiB spare), but only ${gib(available)} GiB is ` +
      `available (MemAvailable): the largest fleet that fits now is ` +
      `--nodes ${largestFleet(available)}`,
  );
}

export function fleetMemoryNote(): string {
  return `Memory check before the runs: ${BASE_MIB} MiB + ${PER_NODE_MIB} MiB per node + ` +
    `${SPARE_MIB} MiB spare must be available (MemAvailable), or the scenario stops at once ` +
    "naming the memory and the largest --nodes that fits.";
}

/** One progress line: where the run's memory is, by kind of process (VmRSS). */
export function describeFleetMemory(cluster: RunningCluster, agents: LaunchedAgent[]): string {
  const agentPids = new Set(agents.map((agent) => agent.pid));
  const byKind = { agents: 0, drivers: 0, controlPlane: 0 };
  for (const process of cluster.logs()) {
    if (!process.running) continue;
    const mib = residentMiB(process.pid);
    if (agentPids.has(process.pid)) byKind.agents += mib;
    else if (process.name.startsWith("csi-driver")) byKind.drivers += mib;
    else byKind.controlPlane += mib;
  }
  const round = (mib: number) => mib.toFixed(0);
  return `[fleet] memory (VmRSS MiB): agents ${round(byKind.agents)}, drivers ` +
    `${round(byKind.drivers)}, control plane ${round(byKind.controlPlane)}, this benchmark ` +
    `${round(residentMiB(Deno.pid))}; MemAvailable ${round(availableMiB())}`;
}
