/**
 * `deno task demo`: builds what is missing, starts a local Kubernetes
 * (tests/cluster) with three fake nodes whose storage pools differ in size,
 * one compiled agent per node beside the node's CSI driver, with deploy/'s
 * RBAC and flags, then places pods with claims and prints where they landed
 * and what capacity each node published before and after. Everything keeps
 * running until Ctrl-C (or SIGTERM); --exit-after-report stops after the
 * report, for tests.
 */

import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { startCluster } from "../cluster/cluster.ts";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { createNamespace } from "../cluster/workloads.ts";
import {
  applyObjects,
  deployedIdentity,
  startDeployedAgent,
  waitAgentReady,
} from "../deploy/apply.ts";
import { EXAMPLE_DIR, type K8sObject, renderKustomize } from "../deploy/render.ts";
import { ensureAgentBinary } from "./build.ts";
import { capacityTable, placementTable, usageHints } from "./report.ts";
import {
  DEMO_NAMESPACE,
  DEMO_NODES,
  DEMO_POOL,
  DEMO_WORKLOADS,
  place,
  type Placement,
  publishedCapacity,
  storageClassManifest,
  waitForCapacity,
} from "./scenario.ts";

const RBAC_KINDS = [
  "Namespace",
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
];
const STEPS = 6;

function step(index: number, text: string): void {
  console.log(`[demo ${index}/${STEPS}] ${text}`);
}

async function startDemoCluster(
  dir: string,
  signal: AbortSignal,
): Promise<{ cluster: RunningCluster; objects: K8sObject[] }> {
  const binaries = await ensureClusterBinaries({ log: (line) => console.log(`  ${line}`), signal });
  console.log(`  ready in ${dirname(binaries.kubectl)}`);
  const { objects } = await renderKustomize(binaries.kubectl, EXAMPLE_DIR);
  step(3, "starting the control plane, 3 fake nodes and their CSI drivers");
  console.log(
    "  CSI driver: the upstream hostpath driver of examples/hostpath (hostpath.csi.k8s.io, csi-driver-host-path\n" +
      "  v1.18.0, built once from its vendored source archive), one per node with its own pool.",
  );
  const pools = new Map(DEMO_NODES.map((node) => [node.name, node.pool]));
  const cluster = await startCluster({
    binaries,
    dir,
    nodes: DEMO_NODES.map((node) => node.name),
    driverOptions: { capacity: (node) => ({ [DEMO_POOL]: pools.get(node)! }) },
    storageClasses: false,
    agentNamespace: deployedIdentity(objects).namespace,
    log: (line) => console.log(`  ${line}`),
    signal,
  });
  return { cluster, objects };
}

async function startAgents(cluster: RunningCluster, objects: K8sObject[]): Promise<void> {
  step(4, "applying deploy/'s RBAC and starting one agent per node with its ServiceAccount");
  await applyObjects(cluster, objects.filter((object) => RBAC_KINDS.includes(object.kind)));
  await applyObjects(cluster, [storageClassManifest() as unknown as K8sObject]);
  await Promise.all(cluster.nodes.map(async (node) => {
    const httpPort = freeLoopbackPort();
    const agent = await startDeployedAgent(cluster, {
      node: node.name,
      objects,
      httpPort,
    });
    await waitAgentReady(`http://127.0.0.1:${httpPort}`, { agent });
    console.log(
      `  agent on ${node.name}: ready (pid ${agent.pid}, http://127.0.0.1:${httpPort}/metrics)`,
    );
  }));
}

async function runScenario(cluster: RunningCluster): Promise<void> {
  const before = await waitForCapacity(cluster, []);
  console.log(`\nCapacity each agent published for class demo-local (CSIStorageCapacity):\n`);
  console.log(capacityTable(before));
  step(
    5,
    `creating ${DEMO_WORKLOADS.length} pods with claims in namespace ${DEMO_NAMESPACE}, one at a time`,
  );
  await createNamespace(cluster.admin, DEMO_NAMESPACE);
  const placements: Placement[] = [];
  for (const workload of DEMO_WORKLOADS) {
    const placement = await place(cluster, workload);
    placements.push(placement);
    console.log(
      `  ${workload.name} (${workload.size}, ${workload.note}): ${
        placement.node ?? "not scheduled"
      }`,
    );
    await waitForCapacity(cluster, placements);
  }
  step(6, "report");
  console.log(`\nWhere each pod landed, and its claim's volume:\n`);
  console.log(placementTable(placements));
  const after = await publishedCapacity(cluster);
  console.log(`\nPublished capacity before and after:\n`);
  console.log(capacityTable(before, { published: after, placements }));
  console.log("");
}

/** How long repeats of the stopping signal are ignored: wrappers (npx, deno task) forward it again. */
const REPEAT_GRACE_MS = 2000;

/**
 * Resolves on the first SIGINT or SIGTERM. The listeners stay: a repeat
 * within REPEAT_GRACE_MS is the same Ctrl-C forwarded by a wrapper and is
 * ignored, a later one exits at once without waiting for the clean stop.
 */
function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    let first: number | undefined;
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      Deno.addSignalListener(signal, () => {
        if (first === undefined) {
          first = Date.now();
          resolve(signal);
        } else if (Date.now() - first > REPEAT_GRACE_MS) {
          console.log("[demo] second signal: exiting without waiting");
          Deno.exit(130);
        }
      });
    }
  });
}

async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      "exit-after-report": { type: "boolean", default: false },
      dir: { type: "string", default: join(REPO_ROOT, ".cluster", "demo") },
    },
  });
  const stop = new AbortController();
  const early = untilSignal().then(() => stop.abort(new Error("interrupted")));
  step(1, "agent binary");
  await ensureAgentBinary((line) => console.log(`  ${line}`));
  step(2, "Kubernetes components and the hostpath driver (built once, then cached)");
  const { cluster, objects } = await startDemoCluster(values.dir, stop.signal);
  try {
    await startAgents(cluster, objects);
    await runScenario(cluster);
    if (values["exit-after-report"]) return;
    console.log(usageHints({
      kubectl: cluster.binaries.kubectl,
      kubeconfig: cluster.kubeconfigPath,
      logs: join(cluster.dir, "logs"),
    }));
    await early;
  } finally {
    console.log("[demo] stopping the agents, drivers and control plane");
    await cluster.stop();
    console.log("[demo] stopped");
  }
}

if (import.meta.main) {
  try {
    await main(Deno.args);
    Deno.exit(0);
  } catch (error) {
    console.error(`[demo] failed: ${error instanceof Error ? error.message : error}`);
    Deno.exit(1);
  }
}
