/**
 * Standalone test cluster, for the demo, benchmarks and manual checks:
 *
 *   deno task cluster -- --nodes 3 --driver hostpath --snapshots --agent upstream \
 *     --agent-args "--enable-capacity --capacity-ownerref-level=-1" --dir /tmp/c
 *   deno task cluster -- --driver democratic --snapshots
 *
 * Writes DIR/kubeconfig (admin) and DIR/cluster.json, prints example kubectl
 * commands and then `cluster ready`, and stops everything on SIGINT/SIGTERM.
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Cluster, startCluster } from "./cluster.ts";
import type { AgentKind, DriverKind } from "./cluster.ts";
import type { CapacityMap } from "./drivers.ts";

const USAGE = `usage: deno task cluster -- [options]
  --nodes N              fake nodes node-a, node-b, ... (default 2)
  --driver KIND          hostpath | democratic | test | none (default hostpath: upstream's
                         hostpath driver; democratic: democratic-csi local-hostpath)
  --snapshots            VolumeSnapshot CRDs, snapshot-controller, a csi-snapshotter per node
  --capacity LIST        pools of every node's driver, e.g. fast=10Gi,slow=1Gi (default fast=10Gi;
                         democratic-csi has none: it reports its filesystem's free space)
  --agent KIND           none | ours | upstream (default none)
  --agent-args "ARGS"    extra agent flags, split on whitespace
  --attach-required      CSIDriver.spec.attachRequired=true
  --dir DIR              keep state, kubeconfig and cluster.json in DIR (default: a temp dir)
  -v N                   verbosity of the Kubernetes components (default 1)`;

export interface CliOptions {
  nodes: number;
  driver: DriverKind;
  snapshots: boolean;
  capacity: CapacityMap;
  agent: "none" | AgentKind;
  agentArgs: string[];
  attachRequired: boolean;
  dir: string | undefined;
  verbosity: number;
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new Error(`--${name} must be one of ${allowed.join(", ")}, not "${value}"`);
  }
  return value as T;
}

export function parseCapacity(list: string): CapacityMap {
  const capacity: CapacityMap = {};
  for (const entry of list.split(",").filter(Boolean)) {
    const [pool, size] = entry.split("=");
    if (!pool || !size) throw new Error(`--capacity entries look like pool=size, not "${entry}"`);
    capacity[pool] = size;
  }
  return capacity;
}

/**
 * `--agent-args "--enable-capacity -v=5"`: node's parseArgs refuses a value
 * that starts with a dash unless written `--agent-args=...`, so join them.
 */
function joinDashValues(args: string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    if (arg === "--agent-args" && next !== undefined) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

export function parseCli(args: string[]): CliOptions {
  const { values } = parseArgs({
    args: joinDashValues(args[0] === "--" ? args.slice(1) : args),
    options: {
      nodes: { type: "string", default: "2" },
      driver: { type: "string", default: "hostpath" },
      snapshots: { type: "boolean", default: false },
      capacity: { type: "string", default: "fast=10Gi" },
      agent: { type: "string", default: "none" },
      "agent-args": { type: "string", default: "" },
      "attach-required": { type: "boolean", default: false },
      dir: { type: "string" },
      v: { type: "string", short: "v", default: "1" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) throw new Error(USAGE);
  const nodes = Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 1) throw new Error(`--nodes must be a positive integer`);
  return {
    nodes,
    driver: oneOf("driver", values.driver, ["hostpath", "democratic", "test", "none"] as const),
    snapshots: values.snapshots,
    capacity: parseCapacity(values.capacity),
    agent: oneOf("agent", values.agent, ["none", "ours", "upstream"] as const),
    agentArgs: values["agent-args"].split(/\s+/).filter(Boolean),
    attachRequired: values["attach-required"],
    dir: values.dir,
    verbosity: Number(values.v),
  };
}

/** What other programs (benchmarks, acceptance checks) read to drive the cluster. */
export function clusterDescription(cluster: Cluster): unknown {
  return {
    kubeconfig: cluster.kubeconfigPath,
    server: cluster.server,
    driverKind: cluster.driverKind,
    driverName: cluster.driverName,
    topologyKey: cluster.topologyKey,
    agentNamespace: cluster.agentNamespace,
    kubectl: cluster.binaries.kubectl,
    startupMs: cluster.startupMs,
    nodes: cluster.nodes.map((node) => ({
      name: node.name,
      csiEndpoint: node.csiEndpoint,
      controlEndpoint: node.driverKind === "test" ? node.controlEndpoint : null,
      stateDir: node.stateDir,
      driver: node.driver ? { pid: node.driver.pid, logFile: node.driver.logFile } : null,
      snapshotter: node.snapshotter
        ? { pid: node.snapshotter.pid, logFile: node.snapshotter.logFile }
        : null,
      agent: node.agent
        ? { kind: node.agent.kind, pid: node.agent.pid, logFile: node.agent.logFile }
        : null,
    })),
    processes: cluster.logs(),
  };
}

function printUsageHints(cluster: Cluster): void {
  const kubectl = cluster.binaries.kubectl;
  console.log(`kubeconfig: ${cluster.kubeconfigPath}`);
  console.log(`cluster.json: ${join(cluster.dir, "cluster.json")}`);
  console.log(`logs: ${join(cluster.dir, "logs")}/`);
  console.log("try:");
  console.log(`  export KUBECONFIG=${cluster.kubeconfigPath}`);
  console.log(`  ${kubectl} get nodes,csidrivers,csinodes,storageclasses`);
  console.log(`  ${kubectl} get csistoragecapacities -A`);
  console.log(`  ${kubectl} get pvc,pv -A`);
  if (cluster.nodes.some((node) => node.snapshotter)) {
    console.log(`  ${kubectl} get volumesnapshots,volumesnapshotcontents -A`);
  }
  console.log(`started in ${(cluster.startupMs / 1000).toFixed(1)} s`);
}

async function main(args: string[]): Promise<void> {
  const cli = parseCli(args);
  const cluster = await startCluster({
    nodes: cli.nodes,
    driver: cli.driver,
    snapshots: cli.snapshots,
    driverOptions: { capacity: cli.capacity },
    attachRequired: cli.attachRequired,
    agent: cli.agent,
    agentArgs: cli.agentArgs,
    verbosity: cli.verbosity,
    ...(cli.dir ? { dir: cli.dir } : {}),
  });
  const file = join(cluster.dir, "cluster.json");
  await Deno.writeTextFile(file, JSON.stringify(clusterDescription(cluster), null, 2) + "\n");
  printUsageHints(cluster);
  console.log("cluster ready");
  await new Promise<void>((resolve) => {
    const onSignal = () => {
      Deno.removeSignalListener("SIGINT", onSignal);
      Deno.removeSignalListener("SIGTERM", onSignal);
      resolve();
    };
    Deno.addSignalListener("SIGINT", onSignal);
    Deno.addSignalListener("SIGTERM", onSignal);
  });
  console.error("[cluster] stopping");
  await cluster.stop();
  console.error("[cluster] stopped");
}

if (import.meta.main) {
  try {
    await main(Deno.args);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    Deno.exit(1);
  }
}
