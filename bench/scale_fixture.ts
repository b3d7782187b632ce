/**
 * The cluster state of scenario 3: many claims and PVs that belong to other
 * nodes, created directly through the API and left as a working cluster has
 * them: each claim selected to one of the other nodes and Bound to its PV, the
 * PV provisioned by the test driver there (node affinity to that node,
 * spec.csi.driver test.csi.k8s.io, the provisioner's finalizer). Binding is
 * left to kube-controller-manager's PV controller, as after a real
 * provisioning.
 */
import type { V1PersistentVolume } from "@kubernetes/client-node";
import { startCluster } from "../tests/cluster/cluster.ts";
import type { AdminClients } from "../tests/cluster/kubeconfig.ts";
import { createFakeNode, TEST_DRIVER_NAME, TEST_TOPOLOGY_KEY } from "../tests/cluster/nodes.ts";
import type { RunningCluster } from "../tests/cluster/running_cluster.ts";
import { delay, withTimeout } from "../tests/cluster/wait.ts";
import { watchClaimProgress } from "./claim_progress.ts";
import {
  BENCH_CLAIM_SIZE,
  BENCH_STORAGE_CLASS,
  claimName,
  createBenchNamespace,
  runPool,
  selectedClaim,
} from "./workload.ts";

export interface ScaleFixtureOptions {
  namespace: string;
  /** Claim + PV pairs. */
  pairs: number;
  /** Node names that get a Node and CSINode (no driver process); pairs go round-robin. */
  otherNodes: string[];
  concurrency: number;
  log: (line: string) => void;
}

export interface ScaleFixtureTimes {
  /** ms to create every claim and PV. */
  createMs: number;
  /** ms from the first create until every claim was Bound. */
  boundMs: number;
}

/** A PV as external-provisioner leaves it after provisioning the claim on `node`. */
export function otherNodeVolume(
  claim: { namespace: string; name: string; uid: string },
  node: string,
): V1PersistentVolume {
  const name = `pvc-${claim.uid}`;
  return {
    metadata: {
      name,
      annotations: {
        "pv.kubernetes.io/provisioned-by": TEST_DRIVER_NAME,
        "volume.kubernetes.io/provisioner-deletion-secret-name": "",
        "volume.kubernetes.io/provisioner-deletion-secret-namespace": "",
      },
      finalizers: ["external-provisioner.volume.kubernetes.io/finalizer"],
    },
    spec: {
      accessModes: ["ReadWriteOnce"],
      capacity: { storage: BENCH_CLAIM_SIZE },
      claimRef: { apiVersion: "v1", kind: "PersistentVolumeClaim", ...claim },
      csi: {
        driver: TEST_DRIVER_NAME,
        volumeHandle: `${node}-${claim.uid}`,
        volumeAttributes: {
          "storage.kubernetes.io/csiProvisionerIdentity": `1700000000000-0-${TEST_DRIVER_NAME}`,
          kind: "fast",
        },
      },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{
            matchExpressions: [{ key: TEST_TOPOLOGY_KEY, operator: "In", values: [node] }],
          }],
        },
      },
      persistentVolumeReclaimPolicy: "Delete",
      storageClassName: BENCH_STORAGE_CLASS,
      volumeMode: "Filesystem",
    },
  };
}

async function createPair(
  admin: AdminClients,
  pair: { index: number; options: ScaleFixtureOptions },
): Promise<void> {
  const { index, options } = pair;
  const node = options.otherNodes[index % options.otherNodes.length] ?? "node-b";
  const claim = await admin.core.createNamespacedPersistentVolumeClaim({
    namespace: options.namespace,
    body: selectedClaim(claimName(index), { node }),
  });
  const ref = { namespace: options.namespace, name: claimName(index), uid: claim.metadata!.uid! };
  await admin.core.createPersistentVolume({ body: otherNodeVolume(ref, node) });
}

/** Creates the nodes, claims and PVs and waits until every claim is Bound. */
export async function createScaleFixture(
  admin: AdminClients,
  options: ScaleFixtureOptions,
): Promise<ScaleFixtureTimes> {
  await Promise.all(options.otherNodes.map((node) => createFakeNode(admin, node)));
  await createBenchNamespace(admin, options.namespace);
  const progress = await watchClaimProgress(admin, {
    namespace: options.namespace,
    expected: options.pairs,
  });
  try {
    const start = performance.now();
    let created = 0;
    await runPool(options.pairs, {
      concurrency: options.concurrency,
      task: async (index) => {
        await createPair(admin, { index, options });
        if (++created % 1000 === 0) options.log(`[fixture] ${created}/${options.pairs} pairs`);
      },
    });
    const createMs = performance.now() - start;
    options.log(`[fixture] created in ${(createMs / 1000).toFixed(1)} s; waiting for binding`);
    const bound = await withTimeout(progress.allBound, {
      timeoutMs: 30 * 60_000,
      description: `${options.pairs} claims Bound by the PV controller`,
    });
    return { createMs, boundMs: bound.at - start };
  } finally {
    progress.stop();
  }
}

/**
 * A cluster for agents on `agentNodes` (each with the test driver, CSIDriver
 * without storageCapacity, no agent yet) with the fixture of `pairs` claims and
 * PVs on `otherNodes` (namespace "scale", 50 requests in flight), then 10 s for
 * the PV controller's last writes and events to drain. The caller stops the
 * cluster; a failed fixture stops it here.
 */
export async function startScaleCluster(
  options: { agentNodes: string[]; pairs: number; otherNodes: string[] },
  log: (line: string) => void,
): Promise<{ cluster: RunningCluster; fixture: ScaleFixtureTimes }> {
  const cluster = await startCluster({
    nodes: options.agentNodes,
    driver: "test",
    driverOptions: { logLevel: "warn" }, // driver logs cost CPU on a 2-core machine
    storageCapacity: false,
    agent: "none",
    log,
  });
  try {
    const fixture = await createScaleFixture(cluster.admin, {
      namespace: "scale",
      pairs: options.pairs,
      otherNodes: options.otherNodes,
      concurrency: 50,
      log,
    });
    await delay(10_000);
    return { cluster, fixture };
  } catch (error) {
    log(await cluster.tailLogs(20));
    await cluster.stop();
    throw error;
  }
}
