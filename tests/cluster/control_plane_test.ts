/**
 * The control plane without CSI: fake nodes the scheduler accepts, agent
 * identities limited to what RBAC grants, the garbage collector, and a stop
 * that leaves nothing behind.
 */

import { CoreV1Api } from "@kubernetes/client-node";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { startCluster } from "./cluster.ts";
import { loadKubeConfig } from "./kubeconfig.ts";
import { createFakeNode } from "./nodes.ts";
import { waitFor } from "./wait.ts";
import { createNamespace } from "./workloads.ts";

function coreClientFor(kubeconfigPath: string): CoreV1Api {
  return loadKubeConfig(kubeconfigPath).makeApiClient(CoreV1Api);
}

function httpStatus(error: unknown): number | undefined {
  return (error as { code?: number } | null)?.code;
}

async function isNotFound(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return false;
  } catch (error) {
    if (httpStatus(error) === 404) return true;
    throw error;
  }
}

Deno.test("control plane with fake nodes", async (t) => {
  const cluster = await startCluster({ nodes: 2, driver: "none" });
  const { admin } = cluster;
  try {
    await t.step(
      "fake nodes are Ready, untainted and carry the attach/detach annotation",
      async () => {
        const nodes = (await admin.core.listNode()).items;
        assert.deepEqual(nodes.map((node) => node.metadata?.name).sort(), ["node-a", "node-b"]);
        for (const node of nodes) {
          const ready = node.status?.conditions?.find((condition) => condition.type === "Ready");
          assert.equal(ready?.status, "True");
          assert.deepEqual(node.spec?.taints ?? [], []);
          const annotations = node.metadata?.annotations ?? {};
          assert.equal(
            annotations["volumes.kubernetes.io/controller-managed-attach-detach"],
            "true",
          );
        }
        const output = await cluster.kubectl(["get", "nodes,csidrivers,csinodes"]);
        assert.match(output, /node-a\s+Ready/);
      },
    );

    await t.step("the scheduler places a pod on a fake node", async () => {
      await createNamespace(admin, "plain");
      await admin.core.createNamespacedPod({
        namespace: "plain",
        body: {
          metadata: { name: "p" },
          spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] },
        },
      });
      const node = await waitFor(async () => {
        const pod = await admin.core.readNamespacedPod({ namespace: "plain", name: "p" });
        return pod.spec?.nodeName;
      }, { description: "pod plain/p scheduled" });
      assert.match(node, /^node-[ab]$/);
    });

    await t.step("an agent identity has only the permissions it was granted", async () => {
      const ref = { namespace: "agents", serviceAccount: "agent-x" };
      const core = coreClientFor(await cluster.identity(ref));
      await assert.rejects(() => core.listPersistentVolume(), (error) => httpStatus(error) === 403);
      await cluster.grantUpstreamProvisionerRbac(ref);
      await waitFor(() => core.listPersistentVolume().then(() => true), {
        description: "the RBAC grant to take effect",
      });
      await assert.rejects(() => core.listSecretForAllNamespaces(), (e) => httpStatus(e) === 403);
    });

    await t.step("the garbage collector deletes objects owned by a deleted Node", async () => {
      const node = await createFakeNode(admin, "node-gc");
      await admin.core.createNamespacedConfigMap({
        namespace: "default",
        body: {
          metadata: {
            name: "owned-by-node-gc",
            ownerReferences: [{
              apiVersion: "v1",
              kind: "Node",
              name: "node-gc",
              uid: node.metadata!.uid!,
            }],
          },
          data: { any: "thing" },
        },
      });
      await admin.core.deleteNode({ name: "node-gc" });
      const readConfigMap = () =>
        admin.core.readNamespacedConfigMap({ namespace: "default", name: "owned-by-node-gc" });
      await waitFor(() => isNotFound(readConfigMap), {
        description: "the ConfigMap owned by node-gc to be collected",
        timeoutMs: 60_000,
      });
      // The CSINode is owned by its Node too, as a kubelet creates it.
      await waitFor(() => isNotFound(() => admin.storage.readCSINode({ name: "node-gc" })), {
        description: "the CSINode of node-gc to be collected",
      });
    });
  } catch (error) {
    console.error(await cluster.tailLogs(50));
    throw error;
  } finally {
    await cluster.stop();
  }

  await t.step("stop leaves no process, port or directory behind", async () => {
    for (const process of cluster.logs()) {
      assert.equal(process.running, false, process.name);
      assert.equal(existsSync(`/proc/${process.pid}`), false, `${process.name} pid ${process.pid}`);
    }
    assert.equal(existsSync(cluster.dir), false);
    const port = Number(new URL(cluster.server).port);
    await assert.rejects(() => Deno.connect({ hostname: "127.0.0.1", port }));
  });
});
