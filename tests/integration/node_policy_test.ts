/**
 * deploy/components/node-confinement on the real API server: each agent's
 * token is bound to a Pod on its node (as the kubelet's is), and the
 * ValidatingAdmissionPolicy lets node-a's agent write only node-a's
 * PersistentVolumes, claims and CSIStorageCapacity objects. The agents run
 * with cluster-admin here, so every refusal is the policy's, not RBAC's.
 */
import assert from "node:assert/strict";
import type { V1PersistentVolume } from "@kubernetes/client-node";
import { startCluster } from "../cluster/cluster.ts";
import { clientsFromKubeconfig } from "../cluster/kubeconfig.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { capacitiesByNode, createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import { startCapacityAgents } from "./capacity_support.ts";
import { mergePatch, selectedClaim, step } from "./support.ts";

const NS = "confined";
const CLASS = "csi-hostpath-fast";

async function boundClaim(cluster: RunningCluster, name: string, node: string) {
  await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: NS,
    body: selectedClaim(name, { node, storageClass: CLASS, driverName: cluster.driverName }),
  });
  const claim = await waitForClaimBound(cluster.admin, { namespace: NS, name });
  return await cluster.admin.core.readPersistentVolume({ name: claim.spec!.volumeName! });
}

/** A PV of the driver on `node`, as an agent would create it. */
function pvOn(cluster: RunningCluster, name: string, node: string): V1PersistentVolume {
  return {
    metadata: { name },
    spec: {
      capacity: { storage: "1Gi" },
      accessModes: ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Delete",
      storageClassName: CLASS,
      csi: { driver: cluster.driverName, volumeHandle: name },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{
            matchExpressions: [{ key: cluster.topologyKey, operator: "In", values: [node] }],
          }],
        },
      },
    },
  };
}

/** Asserts the write is refused with the policy's message naming `what`. */
async function refused(write: () => Promise<unknown>, what: RegExp): Promise<void> {
  await assert.rejects(write, (error: { code?: number; body?: string }) => {
    assert.equal(error.code, 403, String(error.body));
    assert.match(String(error.body), /csi-node-provisioner node confinement: /);
    assert.match(String(error.body), what);
    return true;
  });
}

Deno.test("node confinement: an agent writes only its own node's volumes, claims and capacity", async (t) => {
  await using cluster = await startCluster({ nodes: 2, nodePolicy: true });
  await createNamespace(cluster.admin, NS);
  try {
    await startCapacityAgents(cluster, {
      rbac: "cluster-admin",
      args: ["--capacity-ownerref-level=-1"],
    });
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  }
  const asA = clientsFromKubeconfig(cluster.node("node-a").agent!.launch.kubeconfigPath);
  const pvA = await boundClaim(cluster, "claim-a", "node-a");
  const pvB = await boundClaim(cluster, "claim-b", "node-b");
  const capacities = await waitFor(async () => {
    const byNode = await capacitiesByNode(cluster.admin, {
      namespace: cluster.agentNamespace,
      topologyKey: cluster.topologyKey,
      storageClass: CLASS,
    });
    return byNode.size === 2 ? byNode : undefined;
  }, { description: "capacity of both nodes" });
  const label = { metadata: { labels: { touched: "yes" } } };

  await step(t, cluster, "node-b's PV: no patch, no delete, no create", async () => {
    const name = pvB.metadata!.name!;
    await refused(
      () => asA.core.patchPersistentVolume({ name, body: label }, mergePatch),
      new RegExp(
        `the agent of node node-a may not UPDATE persistentvolumes ${name}, which is not of its node`,
      ),
    );
    await refused(
      () => asA.core.deletePersistentVolume({ name }),
      /node-a may not DELETE persistentvolumes/,
    );
    await refused(
      () => asA.core.createPersistentVolume({ body: pvOn(cluster, "forged-b", "node-b") }),
      /node-a may not CREATE persistentvolumes forged-b/,
    );
  });

  await step(
    t,
    cluster,
    "node-b's claim and capacity: no patch, no delete, no create",
    async () => {
      await refused(
        () =>
          asA.core.patchNamespacedPersistentVolumeClaim({
            namespace: NS,
            name: "claim-b",
            body: label,
          }, mergePatch),
        /node-a may not UPDATE persistentvolumeclaims claim-b/,
      );
      await refused(
        () => asA.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name: "claim-b" }),
        /node-a may not DELETE persistentvolumeclaims claim-b/,
      );
      const capacityB = capacities.get("node-b")!;
      await refused(
        () =>
          asA.storage.patchNamespacedCSIStorageCapacity({
            namespace: cluster.agentNamespace,
            name: capacityB.metadata!.name!,
            body: { capacity: "1Pi" },
          }, mergePatch),
        /node-a may not UPDATE csistoragecapacities/,
      );
      await refused(
        () =>
          asA.storage.createNamespacedCSIStorageCapacity({
            namespace: cluster.agentNamespace,
            body: {
              metadata: { name: "forged-b" },
              storageClassName: CLASS,
              nodeTopology: capacityB.nodeTopology!,
              capacity: "1Pi",
            },
          }),
        /node-a may not CREATE csistoragecapacities forged-b/,
      );
    },
  );

  await step(
    t,
    cluster,
    "any claim's clone source finalizer alone: allowed (a source may have no selected node)",
    async () => {
      const protection = "provisioner.storage.kubernetes.io/cloning-protection";
      const finalizers = (list: string[]) => ({ metadata: { finalizers: list } });
      const claimB = await cluster.admin.core.readNamespacedPersistentVolumeClaim({
        namespace: NS,
        name: "claim-b",
      });
      const before = claimB.metadata!.finalizers ?? [];
      const patchB = (body: object) => () =>
        asA.core.patchNamespacedPersistentVolumeClaim(
          { namespace: NS, name: "claim-b", body },
          mergePatch,
        );
      await patchB(finalizers([...before, protection]))();
      await refused(
        patchB({ ...finalizers(before), ...label }),
        /node-a may not UPDATE persistentvolumeclaims claim-b/,
      );
      await refused(patchB(finalizers([])), /node-a may not UPDATE persistentvolumeclaims claim-b/);
      await patchB(finalizers(before))();
    },
  );

  await step(t, cluster, "its own PV, claim and capacity: allowed", async () => {
    await asA.core.patchPersistentVolume({ name: pvA.metadata!.name!, body: label }, mergePatch);
    await asA.core.patchNamespacedPersistentVolumeClaim(
      { namespace: NS, name: "claim-a", body: label },
      mergePatch,
    );
    await asA.storage.patchNamespacedCSIStorageCapacity({
      namespace: cluster.agentNamespace,
      name: capacities.get("node-a")!.metadata!.name!,
      body: label,
    }, mergePatch);
    await asA.core.createPersistentVolume({ body: pvOn(cluster, "own-a", "node-a") });
    await asA.core.deletePersistentVolume({ name: "own-a" });
  });

  await step(
    t,
    cluster,
    "the same account's token without a Pod on a node: every write refused",
    async () => {
      const unbound = clientsFromKubeconfig(
        await cluster.identity(
          { namespace: cluster.agentNamespace, serviceAccount: "csi-provisioner-node-a" },
          { fileSuffix: "unbound" },
        ),
      );
      await refused(
        () =>
          unbound.core.patchPersistentVolume(
            { name: pvA.metadata!.name!, body: label },
            mergePatch,
          ),
        /has a token that is not bound to a Pod on a node, so it may not UPDATE persistentvolumes/,
      );
    },
  );

  await step(
    t,
    cluster,
    "with the policy on, deleting the claims deletes both nodes' volumes",
    async () => {
      for (const name of ["claim-a", "claim-b"]) {
        await cluster.admin.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name });
      }
      await waitFor(async () => {
        const pvs = await cluster.admin.core.listPersistentVolume();
        const names = new Set(pvs.items.map((pv) => pv.metadata!.name));
        return !names.has(pvA.metadata!.name) && !names.has(pvB.metadata!.name);
      }, { description: "both PVs deleted by their agents", timeoutMs: 60_000 });
    },
  );
});
