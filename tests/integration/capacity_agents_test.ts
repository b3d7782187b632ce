/**
 * Who owns and who touches the CSIStorageCapacity objects, on the real
 * control plane with its garbage collector: three agents that each see only
 * their own node's objects, the Node as owner (this agent's
 * --capacity-owner-node), the capacity client's own write limits, upstream's
 * owner levels from a real Pod, and the refusal of a driver that cannot
 * report capacity.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1CSIStorageCapacity } from "@kubernetes/client-node";
import { oursBinary } from "../cluster/agents.ts";
import { startCluster } from "../cluster/cluster.ts";
import { spawnLogged } from "../cluster/process.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createClaimAndPod, createNamespace } from "../cluster/workloads.ts";
import { spawnTestDriver } from "../csi_driver/spawn.ts";
import {
  allCapacities,
  bytesOf,
  capacitiesOf,
  CAPACITY_ARGS,
  createDecoy,
  identity,
  metricValue,
  startCapacityAgents,
  waitForCapacity,
  watchCapacities,
} from "./capacity_support.ts";
import { scrape, step, waitForReady } from "./support.ts";

const FAST = "csi-hostpath-fast";
const NODES = ["node-a", "node-b", "node-c"];
const DELETES = `csistoragecapacities_writes_total{storageclass="${FAST}",operation="delete"}`;

/** The one object of each node, by node. */
async function objectsByNode(cluster: RunningCluster): Promise<Map<string, V1CSIStorageCapacity>> {
  const byNode = new Map<string, V1CSIStorageCapacity>();
  for (const node of NODES) {
    const objects = await capacitiesOf(cluster, node, FAST);
    if (objects.length === 1) byNode.set(node, objects[0]!);
  }
  return byNode;
}

/** The controller owner of node-a's object, once it is of this kind. */
async function controllerOfNodeA(cluster: RunningCluster, kind: string) {
  return await waitFor(async () => {
    const [object] = await capacitiesOf(cluster, "node-a", FAST);
    const owners = object?.metadata?.ownerReferences ?? [];
    const controller = owners.find((owner) => owner.controller);
    return controller?.kind === kind && owners.length === 1
      ? { owner: controller, uid: object!.metadata!.uid! }
      : undefined;
  }, { description: `node-a's object owned by a ${kind}`, timeoutMs: 30_000 });
}

Deno.test("capacity agents: three agents, the Node owner, write limits, owner levels", async (t) => {
  await using cluster = await startCluster({ nodes: NODES });
  const { admin } = cluster;
  const agents = await startCapacityAgents(cluster, { args: ["--capacity-owner-node"] });

  await step(
    t,
    cluster,
    "each agent publishes one object for its node, owned by its Node",
    async () => {
      const byNode = await objectsByNode(cluster);
      assert.equal((await allCapacities(cluster)).length, 3);
      for (const node of NODES) {
        const uid = (await admin.core.readNode({ name: node })).metadata?.uid;
        assert.deepEqual(byNode.get(node)?.metadata?.ownerReferences?.map((o) => ({ ...o })), [
          { apiVersion: "v1", kind: "Node", name: node, uid, controller: true },
        ]);
        // With the three objects in its namespace, each agent sees only its own (else: 2 obsolete).
        const metrics = await scrape(agents.get(node)!);
        assert.equal(metricValue(metrics, "csistoragecapacities_desired_current"), 1, node);
        assert.equal(metricValue(metrics, "csistoragecapacities_obsolete"), 0, node);
      }
    },
  );

  await step(t, cluster, "each agent touches only its own node's objects", async () => {
    const before = await objectsByNode(cluster);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // decoys are younger
    const duplicateOfB = await createDecoy(cluster, FAST, {
      labelledFor: "node-b",
      topologyOf: "node-b",
    });
    const staleOfA = await createDecoy(cluster, FAST, {
      labelledFor: "node-a",
      topologyOf: "node-c",
    });
    const nobodys = await createDecoy(cluster, FAST, {
      labelledFor: "node-z",
      topologyOf: "node-c",
    });
    await createNamespace(admin, "owners");
    await createClaimAndPod(admin, "owners", {
      name: "on-a",
      storageClass: FAST,
      size: "1Gi",
      node: "node-a",
    });
    await waitFor(async () => {
      const names = (await allCapacities(cluster)).map((object) => object.metadata?.name);
      return !names.includes(duplicateOfB) && !names.includes(staleOfA);
    }, { description: "the decoys of node-a and node-b deleted", timeoutMs: 10_000 });
    const after = await waitFor(async () => {
      const byNode = await objectsByNode(cluster);
      return byNode.get("node-a")?.capacity === "9Gi" ? byNode : undefined;
    }, { description: "node-a's capacity down by 1Gi" });
    assert.equal(identity(after.get("node-b")!), identity(before.get("node-b")!));
    assert.equal(identity(after.get("node-c")!), identity(before.get("node-c")!));
    const names = (await allCapacities(cluster)).map((object) => object.metadata?.name);
    assert.ok(names.includes(nobodys), "an object of no agent's stays");
    assert.equal(metricValue(await scrape(agents.get("node-a")!), DELETES), 1);
    assert.equal(metricValue(await scrape(agents.get("node-b")!), DELETES), 1);
    assert.equal(metricValue(await scrape(agents.get("node-c")!), DELETES), undefined);
    await admin.storage.deleteNamespacedCSIStorageCapacity({
      namespace: cluster.agentNamespace,
      name: nobodys,
    });
  });

  await step(t, cluster, "an agent restart keeps its objects: same names and uids", async () => {
    const before = (await capacitiesOf(cluster, "node-b")).map(identity);
    await cluster.node("node-b").agent!.restart();
    await waitForReady(agents.get("node-b")!);
    assert.deepEqual((await capacitiesOf(cluster, "node-b")).map(identity), before);
  });

  await step(
    t,
    cluster,
    "the capacity client's own QPS and burst bound the writes; a burst coalesces",
    async () => {
      await cluster.node("node-b").agent!.stop();
      await startCapacityAgents(cluster, {
        nodes: ["node-b"],
        args: [
          "--capacity-owner-node",
          "--kube-api-capacity-qps=0.5",
          "--kube-api-capacity-burst=1",
        ],
      });
      const [before] = await capacitiesOf(cluster, "node-b", FAST);
      const capacities = await watchCapacities(cluster);
      try {
        await Promise.all(Array.from({ length: 6 }, (_, i) =>
          createClaimAndPod(admin, "owners", {
            name: `burst-${i}`,
            storageClass: FAST,
            size: "100Mi",
            node: "node-b",
          })));
        await waitForCapacity(cluster, {
          node: "node-b",
          storageClass: FAST,
          bytes: bytesOf(before!.capacity) - 600n * 1024n ** 2n,
        });
        const writes = capacities.events.filter((e) =>
          e.node === "node-b" && e.storageClass === FAST && e.type !== "ADDED"
        );
        assert.ok(writes.length >= 1 && writes.length < 6, `${writes.length} writes for 6 claims`);
        for (let i = 1; i < writes.length; i++) {
          // 0.5 QPS: 2 s apart, less the jitter of two watch deliveries.
          const gap = writes[i]!.at - writes[i - 1]!.at;
          assert.ok(gap > 1500, `writes ${gap.toFixed(0)} ms apart`);
        }
      } finally {
        capacities.stop();
      }
    },
  );

  await step(
    t,
    cluster,
    "upstream's owner levels from a real Pod: 0 Pod, 1 ReplicaSet, 2 Deployment",
    async () => {
      const namespace = cluster.agentNamespace;
      await admin.apps.createNamespacedDeployment({
        namespace,
        body: {
          metadata: { name: "csi-agent" },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: "csi-agent" } },
            template: {
              metadata: { labels: { app: "csi-agent" } },
              spec: {
                nodeSelector: { "kubernetes.io/hostname": "node-a" },
                automountServiceAccountToken: false,
                containers: [{ name: "agent", image: "registry.k8s.io/pause:3.10" }],
              },
            },
          },
        },
      });
      const pod = await waitFor(async () => {
        const pods = await admin.core.listNamespacedPod({
          namespace,
          labelSelector: "app=csi-agent",
        });
        return pods.items[0];
      }, { description: "the Deployment's pod" });
      const adopted = (await capacitiesOf(cluster, "node-a", FAST))[0]!.metadata!.uid;
      const replicaSet = pod.metadata!.ownerReferences!.find((owner) => owner.controller)!;
      const deployment = await admin.apps.readNamespacedDeployment({
        namespace,
        name: "csi-agent",
      });
      const expected: [number, string, string | undefined][] = [
        [0, "Pod", pod.metadata!.uid],
        [1, "ReplicaSet", replicaSet.uid],
        [2, "Deployment", deployment.metadata!.uid],
      ];
      for (const [level, kind, uid] of expected) {
        await cluster.node("node-a").agent!.stop();
        await startCapacityAgents(cluster, {
          nodes: ["node-a"],
          args: [`--capacity-ownerref-level=${level}`],
          env: { POD_NAME: pod.metadata!.name! },
          // Level 2 reads the ReplicaSet's owner: upstream's RBAC grants get on pods and replicasets only.
          rbac: level === 2 ? "cluster-admin" : "upstream",
        });
        const found = await controllerOfNodeA(cluster, kind);
        assert.equal(found.owner.uid, uid, `level ${level}`);
        assert.equal(found.uid, adopted, "the same object, its owner replaced");
      }
    },
  );

  await step(
    t,
    cluster,
    "deleting a Node deletes its objects, and its agent does not re-create them",
    async () => {
      await admin.core.deleteNode({ name: "node-c" });
      await waitFor(async () => (await capacitiesOf(cluster, "node-c")).length === 0, {
        description: "node-c's objects garbage-collected",
        timeoutMs: 30_000,
      });
      await new Promise((resolve) => setTimeout(resolve, 3000));
      assert.deepEqual(await capacitiesOf(cluster, "node-c"), []);
      assert.equal(cluster.node("node-c").agent!.running, true);
      assert.match(readFileSync(cluster.node("node-c").agent!.logFile, "utf8"), /owner .* is gone/);
    },
  );
});

// The test driver: the hostpath driver always reports GET_CAPACITY.
Deno.test("capacity: a driver without GET_CAPACITY is refused at start-up, clearly", async () => {
  const dir = mkdtempSync(join(tmpdir(), "capacity-refusal-"));
  const driver = await spawnTestDriver({
    endpoint: `unix://${join(dir, "csi.sock")}`,
    controlEndpoint: `unix://${join(dir, "control.sock")}`,
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "10Gi" }],
    controllerCapabilities: ["CREATE_DELETE_VOLUME"],
  });
  try {
    const logFile = join(dir, "agent.log");
    const agent = spawnLogged({
      name: "csi-node-provisioner",
      command: oursBinary(),
      args: [
        "--node-deployment",
        `--csi-address=${join(dir, "csi.sock")}`,
        ...CAPACITY_ARGS,
        "--capacity-ownerref-level=-1",
      ],
      logFile,
      env: { NODE_NAME: "node-a", NAMESPACE: "csi" },
    });
    const status = await agent.exited;
    assert.equal(status.code, 1);
    assert.match(
      readFileSync(logFile, "utf8"),
      /--enable-capacity is set but CSI driver test.csi.k8s.io does not report the GET_CAPACITY controller capability/,
    );
    assert.deepEqual(await driver.control.calls("GetCapacity"), []);
  } finally {
    await driver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
