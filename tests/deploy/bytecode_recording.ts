/**
 * A recording of the order in which a binary that takes the agent's command
 * line first runs its functions (Bun's BUN_BYTECODE_ORDER_OUT), for `bun
 * build --bytecode-order`: on a fresh one-node test cluster, with
 * deploy/daemonset.yaml's flags, it starts, becomes ready and publishes
 * capacity, provisions a few claims, deletes their volumes once the claims
 * are gone, and is stopped with SIGTERM, on which Bun writes the file. So the
 * start-up's functions come first, then those of a claim's life.
 * bench/bytecode_order.ts records deploy/image/bytecode.order with it,
 * bench/floor_claim.ts the per-claim floor program's order, and
 * tests/e2e/bytecode_order_test.ts checks the committed order against it.
 */
import { join } from "node:path";
import { orderEntries } from "../../deploy/image/compile.ts";
import { startCluster } from "../cluster/cluster.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { waitClaimsBound } from "../cluster/workloads.ts";
import { deployedAgentArgs, waitAgentReady } from "./apply.ts";
import { DEPLOY_DIR, parseObjects } from "./render.ts";
import { TEST_DRIVER_NAME } from "../cluster/nodes.ts";
import { storageClassName } from "../cluster/setup.ts";
import { selectedClaim } from "../integration/support.ts";

const NAMESPACE = "bytecode-order";
const NODE = "node-a";
/** Enough for the work queue, the journal and Events to run as they do under load. */
const CLAIMS = 20;
const STEP_TIMEOUT_MS = 120_000;

async function volumesGone(cluster: RunningCluster): Promise<boolean> {
  return (await cluster.admin.core.listPersistentVolume()).items.length === 0;
}

/** CLAIMS claims of the test driver's pool, already selected to NODE, created at once. */
async function createClaims(cluster: RunningCluster): Promise<void> {
  await cluster.admin.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  const storageClass = storageClassName("test", "fast");
  await Promise.all(
    Array.from(
      { length: CLAIMS },
      (_, index) =>
        cluster.admin.core.createNamespacedPersistentVolumeClaim({
          namespace: NAMESPACE,
          body: selectedClaim(`claim-${index}`, {
            node: NODE,
            storageClass,
            size: "1Mi",
            driverName: TEST_DRIVER_NAME,
          }),
        }),
    ),
  );
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
  await createClaims(cluster);
  const timeoutMs = STEP_TIMEOUT_MS;
  await waitClaimsBound(cluster.admin, NAMESPACE, { count: CLAIMS, timeoutMs });
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
