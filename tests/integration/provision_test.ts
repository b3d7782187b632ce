/**
 * Provisioning on the real control plane (kube-apiserver, the PV controller
 * and the scheduler of kube-controller-manager and kube-scheduler), with the
 * upstream hostpath driver on each fake node (its calls seen through the
 * recording proxy) and one compiled agent per node.
 */
import assert from "node:assert/strict";
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import {
  affinityNodes,
  createClaimAndPod,
  createNamespace,
  waitForClaimBound,
} from "../cluster/workloads.ts";
import { ANN_SELECTED_NODE } from "../../lib/model/keys.ts";
import { claimEvents, scrape, selectedClaim, startOurAgents, step } from "./support.ts";

const FAST = "csi-hostpath-fast";

const AGENT_ARGS = [
  "--worker-threads=20",
  "--retry-interval-start=200ms",
  "--retry-interval-max=2s",
  "-v=4",
];

async function boundVolumesOn(cluster: RunningCluster, namespace: string) {
  const claims = await cluster.admin.core.listNamespacedPersistentVolumeClaim({ namespace });
  return claims.items;
}

/** Every volume in every node's driver, and every PV of the driver: they must match one to one. */
async function assertNoStrayVolumes(cluster: RunningCluster): Promise<void> {
  const pvs = (await cluster.admin.core.listPersistentVolume()).items
    .filter((pv) => pv.spec?.csi?.driver === cluster.driverName);
  const handles = new Set(pvs.map((pv) => pv.spec?.csi?.volumeHandle));
  for (const node of cluster.nodes) {
    for (const volume of await node.volumes()) {
      assert.ok(
        handles.has(volume.id),
        `${node.name} holds volume ${volume.name} (${volume.id}) without a PV`,
      );
    }
  }
  const driverVolumes = (await Promise.all(cluster.nodes.map((node) => node.volumes()))).flat();
  assert.equal(driverVolumes.length, pvs.length, "one driver volume per PV");
}

Deno.test("the agent provisions claims selected to its node, on a real control plane", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b", "node-c"],
    // node-a's pool is too small for the 20Gi claim of the ResourceExhausted step.
    driverOptions: {
      capacity: (node) => ({ fast: node === "node-a" ? "10Gi" : "100Gi" }),
      recordCalls: true,
    },
    // Placement here is by node selector and by ResourceExhausted, not by published capacity.
    storageCapacity: false,
  });
  const { admin } = cluster;
  {
    const agents = await startOurAgents(cluster, { args: AGENT_ARGS });

    await step(
      t,
      cluster,
      "a pod's claim scheduled to node-b is provisioned by node-b's agent only",
      async () => {
        await createNamespace(admin, "one");
        await createClaimAndPod(admin, "one", {
          name: "data",
          storageClass: FAST,
          size: "1Gi",
          node: "node-b",
        });
        const claim = await waitForClaimBound(admin, { namespace: "one", name: "data" });
        assert.equal(claim.metadata?.annotations?.[ANN_SELECTED_NODE], "node-b");
        const pv = await admin.core.readPersistentVolume({ name: claim.spec!.volumeName! });
        assert.deepEqual(affinityNodes(pv, cluster.topologyKey), ["node-b"]);
        assert.equal(pv.spec?.claimRef?.uid, claim.metadata?.uid);
        assert.equal((await cluster.node("node-b").calls("CreateVolume")).length, 1);
        for (const other of ["node-a", "node-c"]) {
          assert.equal(
            (await cluster.node(other).calls("CreateVolume")).length,
            0,
            `${other} made a call`,
          );
        }
        // Events are written in the background, after the PV: wait for the last one.
        const ours = await waitFor(async () => {
          const events = await claimEvents(cluster, { namespace: "one", name: "data" });
          const mine = events.filter((event) =>
            event.source?.component?.startsWith(cluster.driverName)
          );
          return mine.some((event) => event.reason === "ProvisioningSucceeded") && mine;
        }, { description: "the ProvisioningSucceeded event on one/data" });
        assert.deepEqual(ours.map((event) => event.reason).sort(), [
          "Provisioning",
          "ProvisioningSucceeded",
        ]);
        assert.ok(
          ours.every((event) => event.source?.host === "node-b"),
          "only node-b's agent wrote events",
        );
        const metrics = await scrape(agents.get("node-b")!);
        assert.match(
          metrics,
          /controller_persistentvolumeclaim_provision_total\{class="csi-hostpath-fast",source=""\} 1/,
        );
        assert.doesNotMatch(
          await scrape(agents.get("node-a")!),
          /controller_persistentvolumeclaim_provision_total\{/,
        );
      },
    );

    await step(
      t,
      cluster,
      "ResourceExhausted on node-a moves the pod to another node",
      async () => {
        // Only node-a is schedulable at first, and its driver has no room for 20Gi.
        await setUnschedulable(cluster, { "node-b": true, "node-c": true });
        await createClaimAndPod(admin, "one", {
          name: "moved",
          storageClass: FAST,
          size: "20Gi",
        });
        await waitFor(
          async () => (await cluster.node("node-a").calls("CreateVolume")).length > 0,
          {
            description: "node-a's driver to refuse the volume",
          },
        );
        // Without capacity tracking the scheduler cannot know node-a is full: leave it only node-b.
        await setUnschedulable(cluster, { "node-a": true, "node-b": false });
        const claim = await waitForClaimBound(admin, { namespace: "one", name: "moved" });
        assert.equal(claim.metadata?.annotations?.[ANN_SELECTED_NODE], "node-b");
        await waitFor(async () => {
          const pod = await admin.core.readNamespacedPod({ namespace: "one", name: "moved" });
          return pod.spec?.nodeName === "node-b";
        }, { description: "the pod bound to node-b" });
        const failures = (await claimEvents(cluster, { namespace: "one", name: "moved" }))
          .filter((event) => event.reason === "ProvisioningFailed");
        // The hostpath driver's own words (pkg/hostpath/hostpath.go, createVolume).
        assert.deepEqual(failures.map((event) => event.message), [
          "rpc error: code = ResourceExhausted desc = requested capacity 21474836480 exceeds " +
          'remaining capacity for "fast", 0 out of 10Gi already used',
        ]);
        await setUnschedulable(cluster, { "node-a": false, "node-c": false });
      },
    );

    await step(
      t,
      cluster,
      "100 claims over 3 nodes all end Bound, one PV each, no stray volumes",
      async () => {
        await createNamespace(admin, "many");
        const nodes = cluster.nodes.map((node) => node.name);
        await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            admin.core.createNamespacedPersistentVolumeClaim({
              namespace: "many",
              body: selectedClaim(`claim-${i}`, {
                node: nodes[i % 3]!,
                storageClass: FAST,
                size: "100Mi",
                driverName: cluster.driverName,
              }),
            })),
        );
        await waitFor(async () => {
          const claims = await boundVolumesOn(cluster, "many");
          return claims.filter((claim) => claim.status?.phase === "Bound").length === 100;
        }, { description: "100 claims Bound", timeoutMs: 180_000, intervalMs: 500 });
        const claims = await boundVolumesOn(cluster, "many");
        assert.equal(
          new Set(claims.map((claim) => claim.spec?.volumeName)).size,
          100,
          "one PV per claim",
        );
        await assertNoStrayVolumes(cluster);
      },
    );

    await step(
      t,
      cluster,
      "an agent killed while its driver is frozen mid-burst: every claim completes, no leak",
      async () => {
        await createNamespace(admin, "burst");
        const nodeA = cluster.node("node-a");
        await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            admin.core.createNamespacedPersistentVolumeClaim({
              namespace: "burst",
              body: selectedClaim(`claim-${i}`, {
                node: "node-a",
                storageClass: FAST,
                size: "50Mi",
                driverName: cluster.driverName,
              }),
            })),
        );
        await waitFor(
          async () =>
            (await boundVolumesOn(cluster, "burst")).filter((c) => c.status?.phase === "Bound")
              .length >= 15,
          {
            description: "the burst under way",
            timeoutMs: 60_000,
            intervalMs: 50,
          },
        );
        // The driver stops answering (SIGSTOP) with calls in flight; the agent dies meanwhile.
        nodeA.freezeDriver();
        try {
          await waitFor(
            async () =>
              (await nodeA.calls("CreateVolume")).some((call) =>
                call.code === null && Date.parse(call.time) < Date.now() - 200
              ),
            { description: "a CreateVolume hanging in the frozen driver" },
          );
          const status = await nodeA.agent!.kill();
          assert.equal(status.signal, "SIGKILL");
        } finally {
          nodeA.thawDriver();
        }
        await nodeA.agent!.restart();
        await waitFor(
          async () =>
            (await boundVolumesOn(cluster, "burst")).filter((c) => c.status?.phase === "Bound")
              .length === 60,
          {
            description: "every claim of the burst Bound after the restart",
            timeoutMs: 120_000,
            intervalMs: 500,
          },
        );
        await assertNoStrayVolumes(cluster);
      },
    );
  }
});

const patchAsMerge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/** Cordons (true) or uncordons (false) nodes. */
async function setUnschedulable(
  cluster: RunningCluster,
  nodes: Record<string, boolean>,
): Promise<void> {
  for (const [name, unschedulable] of Object.entries(nodes)) {
    await cluster.admin.core.patchNode({ name, body: { spec: { unschedulable } } }, patchAsMerge);
  }
}
