/**
 * `deno task bytecode-order`: records deploy/image/bytecode.order, the order
 * in which the agent first runs its functions, for `bun build
 * --bytecode-order` (deploy/image/compile.ts says what it buys).
 *
 * The agent is compiled without an order and run on a one-node test cluster
 * with deploy/daemonset.yaml's flags, with BUN_BYTECODE_ORDER_OUT set: it
 * starts, becomes ready and publishes capacity, provisions a few claims,
 * deletes their volumes once the claims are gone, and is stopped with
 * SIGTERM, on which Bun writes the file. So the start-up's functions come
 * first, then those of a claim's life. Run it again when `bytecode-order`
 * in tests/e2e says the file has gone stale (after a Bun upgrade, or once
 * enough of the code has changed).
 */
import { join } from "node:path";
import { BYTECODE_ORDER_FILE, orderEntries } from "../deploy/image/compile.ts";
import { startCluster } from "../tests/cluster/cluster.ts";
import { freeLoopbackPort } from "../tests/cluster/ports.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { waitFor } from "../tests/cluster/wait.ts";
import { deployedAgentArgs, waitAgentReady } from "../tests/deploy/apply.ts";
import { DEPLOY_DIR, parseObjects } from "../tests/deploy/render.ts";
import { compileWithAgentFlags } from "./floor.ts";
import { createBenchNamespace, createSelectedClaims } from "./workload.ts";

const REPO = new URL("..", import.meta.url).pathname;
const NAMESPACE = "bytecode-order";
const NODE = "node-a";
/** Enough for the work queue, the journal and Events to run as they do under load. */
const CLAIMS = 20;
const STEP_TIMEOUT_MS = 120_000;

async function claimsBound(cluster: RunningCluster): Promise<boolean> {
  const claims = await cluster.admin.core.listNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
  });
  return claims.items.length === CLAIMS &&
    claims.items.every((claim) => claim.status?.phase === "Bound");
}

async function volumesGone(cluster: RunningCluster): Promise<boolean> {
  return (await cluster.admin.core.listPersistentVolume()).items.length === 0;
}

/**
 * What a recording runs: `binary` takes the agent's command line; without
 * `deletesVolumes` (the per-claim floor program, which only provisions) the
 * run ends once every claim is Bound.
 */
export interface OrderRecording {
  binary: string;
  orderOut: string;
  deletesVolumes: boolean;
}

/** Runs the binary through a claim's life; resolves once it exited, the file written. */
async function recordOnCluster(cluster: RunningCluster, run: OrderRecording): Promise<void> {
  const daemonSet = await Deno.readTextFile(join(DEPLOY_DIR, "daemonset.yaml"));
  const httpPort = freeLoopbackPort();
  const agent = await cluster.startAgent(NODE, {
    kind: "ours",
    binary: run.binary,
    args: deployedAgentArgs(parseObjects(daemonSet), { httpPort }),
    env: { BUN_BYTECODE_ORDER_OUT: run.orderOut },
  });
  await waitAgentReady(`http://127.0.0.1:${httpPort}`, { agent, timeoutMs: STEP_TIMEOUT_MS });
  await createBenchNamespace(cluster.admin, NAMESPACE);
  await createSelectedClaims(cluster.admin, {
    namespace: NAMESPACE,
    count: CLAIMS,
    node: NODE,
    concurrency: CLAIMS,
  });
  const timeoutMs = STEP_TIMEOUT_MS;
  await waitFor(() => claimsBound(cluster), { description: "every claim Bound", timeoutMs });
  if (run.deletesVolumes) {
    await cluster.admin.core.deleteCollectionNamespacedPersistentVolumeClaim({
      namespace: NAMESPACE,
    });
    await waitFor(() => volumesGone(cluster), { description: "every PV deleted", timeoutMs });
  }
  const status = await agent.stop();
  if (!status.success) throw new Error(`the agent exited with ${status.code} on SIGTERM`);
}

/**
 * Records the order `run.binary` first runs its functions in, into
 * `run.orderOut`, on a fresh one-node cluster; returns its entries.
 */
export async function recordBytecodeOrder(
  run: OrderRecording,
  log: (line: string) => void,
): Promise<string[]> {
  const cluster = await startCluster({
    nodes: 1,
    driver: "test",
    driverOptions: { logLevel: "warn" },
    storageCapacity: true,
    agent: "none",
    log,
  });
  try {
    await recordOnCluster(cluster, run);
  } catch (error) {
    log(await cluster.tailLogs(20));
    throw error;
  } finally {
    await cluster.stop();
  }
  return orderEntries(await Deno.readTextFile(run.orderOut));
}

async function main(): Promise<void> {
  const log = (line: string) => console.error(line);
  const dir = await Deno.makeTempDir({ prefix: "bytecode-order-" });
  try {
    const binary = await compileWithAgentFlags("main.ts", {
      outfile: join(dir, "csi-node-provisioner"),
      commit: "bytecode-order",
    });
    const orderOut = join(dir, "bytecode.order");
    const entries = await recordBytecodeOrder({ binary, orderOut, deletesVolumes: true }, log);
    await Deno.copyFile(orderOut, join(REPO, BYTECODE_ORDER_FILE));
    log(
      `${BYTECODE_ORDER_FILE}: ${entries.length} functions and modules in the order they first ran`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
