/**
 * The claims benchmarks create, and creating many of them with a bounded
 * number of requests in flight.
 */
import { selectedClaim as selectedClaimOf } from "../tests/integration/support.ts";
import type { V1PersistentVolumeClaim } from "@kubernetes/client-node";
import type { AdminClients } from "../tests/cluster/kubeconfig.ts";
import { TEST_DRIVER_NAME } from "../tests/cluster/nodes.ts";

/** The WaitForFirstConsumer class the cluster creates for the driver's default pool. */
export const BENCH_STORAGE_CLASS = "test-fast";

/** Small enough that thousands fit the default 10Gi pool. */
export const BENCH_CLAIM_SIZE = "1Mi";

/** Calls task(0..count-1) with at most `concurrency` in flight; rejects on the first failure. */
export async function runPool<T>(
  count: number,
  options: { concurrency: number; task: (index: number) => Promise<T> },
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await options.task(index);
    }
  };
  const workers = Array.from({ length: Math.min(options.concurrency, count) }, worker);
  await Promise.all(workers);
  return results;
}

/** claim-00042: sorts in creation order. */
export function claimName(index: number): string {
  return `claim-${String(index).padStart(5, "0")}`;
}

/**
 * A WaitForFirstConsumer claim as it looks once kube-scheduler selected a node
 * and the PV controller named the external provisioner: the state in which a
 * node agent picks it up. Created that way, so that what is timed is the
 * agent, not the scheduler or the PV controller's annotation pass.
 */
export function selectedClaim(
  name: string,
  options: { node: string; storageClass?: string; size?: string },
): V1PersistentVolumeClaim {
  return selectedClaimOf(name, {
    node: options.node,
    storageClass: options.storageClass ?? BENCH_STORAGE_CLASS,
    size: options.size ?? BENCH_CLAIM_SIZE,
    driverName: TEST_DRIVER_NAME,
    annotations: { "volume.beta.kubernetes.io/storage-provisioner": TEST_DRIVER_NAME },
  });
}

/** Creates `count` selected claims named claimName(0..count-1). */
export async function createSelectedClaims(
  admin: AdminClients,
  options: { namespace: string; count: number; node: string; concurrency: number },
): Promise<void> {
  await runPool(options.count, {
    concurrency: options.concurrency,
    task: async (index) => {
      await admin.core.createNamespacedPersistentVolumeClaim({
        namespace: options.namespace,
        body: selectedClaim(claimName(index), { node: options.node }),
      });
    },
  });
}

/** A namespace without waiting for its ServiceAccount: benchmarks create no pods. */
export async function createBenchNamespace(admin: AdminClients, name: string): Promise<void> {
  await admin.core.createNamespace({ body: { metadata: { name } } });
}
