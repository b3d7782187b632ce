/**
 * Lost nodes and lost volumes, on the real control plane with the hostpath
 * driver: four agents with --node-loss-release-after=20s (node-d, node-a
 * and node-b watch the Leases; node-c does not). Two StorageClasses, one
 * with the annotation that lets the claims of lost volumes be deleted.
 *
 * node-b comes back as a new Node with two of its three volumes gone from
 * its driver: its agent reports those two at start (VolumeMissingOnDriver,
 * the gauge), deletes the claim of the one whose class opts in (its PV then
 * goes through the normal delete path) and leaves the third alone.
 *
 * node-c's agent and driver are killed and its Node deleted: once its Lease
 * has expired, a watcher notes on it when the Node was first seen gone; the
 * Node created again at once clears the note and nothing is released. The
 * Node deleted once more: after the grace (and not before), its Released PV
 * is deleted, its Bound PVs are reported on the PV and the claim, and only
 * the claim of the opting-in class is deleted, whose PV is released next.
 */
import assert from "node:assert/strict";
import type { CoreV1Event } from "@kubernetes/client-node";
import { startCluster } from "../cluster/cluster.ts";
import { createFakeNode } from "../cluster/nodes.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import {
  createClaimAndPod,
  createNamespace,
  forceDeletePod,
  waitForClaim,
} from "../cluster/workloads.ts";
import { hostpathStorageClass } from "../cluster/hostpath.ts";
import { ANN_NODE_GONE_SINCE, leaseName } from "../../lib/model/lease.ts";
import { ANN_DELETE_CLAIMS_OF_LOST_NODES } from "../../lib/delete/lost/volumes.ts";
import { metricValue, startCapacityAgents } from "./capacity_support.ts";
import { runExplain } from "./explain_support.ts";
import { scrape, step } from "./support.ts";

const NODES = ["node-a", "node-b", "node-c", "node-d"];
const ARGS = [
  "--capacity-owner-node",
  "--capacity-withdraw-after=10s",
  "--node-loss-release-after=20s",
];
const NS = "lost";
const PLAIN = "lost-plain";
const OPT_IN = "lost-opt-in";
const LOST_REASONS = ["LostNodeVolume", "LostNodeVolumeReleased", "LostNodeClaimDeleted"];

/** A class of the hostpath driver's fast pool, under another name. */
async function createClass(cluster: RunningCluster, name: string, optIn: boolean) {
  const base = hostpathStorageClass("fast");
  await cluster.admin.storage.createStorageClass({
    body: {
      ...base,
      metadata: {
        name,
        ...(optIn ? { annotations: { [ANN_DELETE_CLAIMS_OF_LOST_NODES]: "true" } } : {}),
      },
      reclaimPolicy: "Delete",
    },
  });
}

/** Provisions the claims on `node`, then deletes their pods (no kubelet runs them); the PV names. */
async function provision(
  cluster: RunningCluster,
  node: string,
  claims: [name: string, storageClass: string][],
): Promise<Map<string, string>> {
  for (const [name, storageClass] of claims) {
    await createClaimAndPod(cluster.admin, NS, { name, storageClass, size: "1Gi", node });
  }
  const volumes = new Map<string, string>();
  for (const [name] of claims) {
    const claim = await waitForClaim(
      cluster.admin,
      { namespace: NS, name },
      (c) => c.status?.phase === "Bound",
      { description: "Bound", timeoutMs: 90_000 },
    );
    volumes.set(name, claim.spec!.volumeName!);
    await forceDeletePod(cluster.admin, NS, name);
  }
  return volumes;
}

/** The Node and its CSINode deleted; created again (a new UID) when `again`. */
async function deleteNode(cluster: RunningCluster, node: string, again = false) {
  await cluster.admin.storage.deleteCSINode({ name: node }).catch(() => undefined);
  await cluster.admin.core.deleteNode({ name: node, gracePeriodSeconds: 0 });
  if (!again) return;
  await waitFor(async () => {
    try {
      await cluster.admin.core.readNode({ name: node });
      return false;
    } catch {
      return true;
    }
  }, { description: `Node ${node} deleted`, timeoutMs: 10_000 });
  await createFakeNode(cluster.admin, node, {
    driverName: cluster.driverName,
    topologyKey: cluster.topologyKey,
  });
}

/** The Events of these reasons, as "Reason Kind/name", sorted. */
async function eventsOf(cluster: RunningCluster, reasons: string[]): Promise<string[]> {
  const list = await cluster.admin.core.listEventForAllNamespaces();
  return list.items
    .filter((event: CoreV1Event) => reasons.includes(event.reason ?? ""))
    .map((event) =>
      `${event.reason} ${event.involvedObject.kind}/${event.involvedObject.name} x${
        event.count ?? 1
      }`
    )
    .sort();
}

/** The message of the (first) Event of this reason. */
async function eventMessage(cluster: RunningCluster, reason: string): Promise<string> {
  const list = await cluster.admin.core.listEventForAllNamespaces();
  return list.items.find((event: CoreV1Event) => event.reason === reason)?.message ?? "";
}

/** Waits until the Events of these reasons (less those `except` names) are `expected`. */
async function expectEvents(
  cluster: RunningCluster,
  reasons: string[],
  expected: string[],
  except = "\u0000",
): Promise<void> {
  let seen: string[] = [];
  await waitFor(async () => {
    seen = (await eventsOf(cluster, reasons)).filter((line) => !line.includes(except));
    return JSON.stringify(seen) === JSON.stringify([...expected].sort());
  }, { description: "the Events", timeoutMs: 20_000 }).catch(() => undefined);
  assert.deepEqual(seen, [...expected].sort());
}

async function pvExists(cluster: RunningCluster, name: string): Promise<boolean> {
  try {
    await cluster.admin.core.readPersistentVolume({ name });
    return true;
  } catch {
    return false;
  }
}

async function claimExists(cluster: RunningCluster, name: string): Promise<boolean> {
  try {
    await cluster.admin.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name });
    return true;
  } catch {
    return false;
  }
}

/** node-c's Lease's node-gone-since note. */
async function goneSince(cluster: RunningCluster, node: string): Promise<string | undefined> {
  const lease = await cluster.admin.coordination.readNamespacedLease({
    namespace: cluster.agentNamespace,
    name: leaseName(cluster.driverName, node),
  });
  return lease.metadata?.annotations?.[ANN_NODE_GONE_SINCE];
}

/** Removes volumes from the stopped hostpath driver's state, as if its disk were new. */
async function forgetVolumes(stateDir: string, pvNames: string[]) {
  const path = `${stateDir}/state.json`;
  const state = JSON.parse(await Deno.readTextFile(path)) as {
    Volumes?: { VolID: string; VolName: string }[];
  };
  const gone = (state.Volumes ?? []).filter((volume) => pvNames.includes(volume.VolName));
  assert.equal(gone.length, pvNames.length, "the driver held those volumes");
  state.Volumes = (state.Volumes ?? []).filter((volume) => !pvNames.includes(volume.VolName));
  for (const volume of gone) await Deno.remove(`${stateDir}/${volume.VolID}`, { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(state));
}

/** The sum over the agents of a series. */
async function total(agents: Map<string, string>, nodes: string[], series: string) {
  let sum = 0;
  for (const node of nodes) sum += metricValue(await scrape(agents.get(node)!), series) ?? 0;
  return sum;
}

Deno.test("lost nodes: released after the grace, never a Node that came back; volumes missing on the driver", async (t) => {
  await using cluster = await startCluster({ nodes: NODES });
  await createClass(cluster, PLAIN, false);
  await createClass(cluster, OPT_IN, true);
  const agents = await startCapacityAgents(cluster, { args: ARGS, rbac: "cluster-admin" });
  await createNamespace(cluster.admin, NS);
  const onB = await provision(cluster, "node-b", [
    ["b-kept", PLAIN],
    ["b-gone", PLAIN],
    ["b-gone-opt-in", OPT_IN],
  ]);
  const onC = await provision(cluster, "node-c", [
    ["c-bound", PLAIN],
    ["c-bound-opt-in", OPT_IN],
    ["c-released", PLAIN],
  ]);

  await step(
    t,
    cluster,
    "a Node back without two of its volumes: reported, the opted-in claim deleted",
    async () => {
      const b = cluster.node("node-b");
      await b.agent!.stop();
      await b.driver!.stop();
      await deleteNode(cluster, "node-b", true);
      await forgetVolumes(b.stateDir, [onB.get("b-gone")!, onB.get("b-gone-opt-in")!]);
      await cluster.restartDriver("node-b");
      await b.agent!.restart();
      await waitFor(async () => !(await claimExists(cluster, "b-gone-opt-in")), {
        description: "claim b-gone-opt-in deleted",
        timeoutMs: 60_000,
      });
      await waitFor(async () => !(await pvExists(cluster, onB.get("b-gone-opt-in")!)), {
        description: "its Released PV deleted by the normal delete path",
        timeoutMs: 60_000,
      });
      await expectEvents(
        cluster,
        ["VolumeMissingOnDriver", ...LOST_REASONS],
        [
          "LostNodeClaimDeleted PersistentVolumeClaim/b-gone-opt-in x1",
          `VolumeMissingOnDriver PersistentVolume/${onB.get("b-gone")} x1`,
          `VolumeMissingOnDriver PersistentVolume/${onB.get("b-gone-opt-in")} x1`,
          "VolumeMissingOnDriver PersistentVolumeClaim/b-gone x1",
          "VolumeMissingOnDriver PersistentVolumeClaim/b-gone-opt-in x1",
        ],
      );
      const metrics = await scrape(agents.get("node-b")!);
      assert.equal(metricValue(metrics, "csi_node_provisioner_volumes_missing_on_driver"), 2);
      assert.ok(await claimExists(cluster, "b-gone"), "no opt-in: the claim stays");
      assert.ok(await pvExists(cluster, onB.get("b-kept")!), "a volume the driver has is kept");
      assert.deepEqual((await b.volumes()).map((v) => v.name), [onB.get("b-kept")]);
    },
  );

  await step(t, cluster, "a Node deleted and created again at once: nothing released", async () => {
    const c = cluster.node("node-c");
    await c.agent!.kill();
    await c.driver!.stop();
    await cluster.admin.core.deleteNamespacedPersistentVolumeClaim({
      namespace: NS,
      name: "c-released",
    });
    await deleteNode(cluster, "node-c");
    // The Lease expires a minute after its last renewal; a watcher then reads the Node.
    await waitFor(async () => (await goneSince(cluster, "node-c")) !== undefined, {
      description: "node-gone-since noted on node-c's Lease",
      timeoutMs: 120_000,
    });
    await createFakeNode(cluster.admin, "node-c", {
      driverName: cluster.driverName,
      topologyKey: cluster.topologyKey,
    });
    await waitFor(async () => (await goneSince(cluster, "node-c")) === undefined, {
      description: "the note cleared",
      timeoutMs: 15_000,
    });
    await delay(25_000);
    for (const pv of onC.values()) assert.ok(await pvExists(cluster, pv), `${pv} kept`);
    assert.deepEqual(await eventsOf(cluster, LOST_REASONS.slice(1)), [
      "LostNodeClaimDeleted PersistentVolumeClaim/b-gone-opt-in x1",
    ]);
    assert.deepEqual(await eventsOf(cluster, ["LostNodeVolume"]), []);
  });

  await step(
    t,
    cluster,
    "a Node deleted for good: released after the grace, claims only with the opt-in",
    async () => {
      // The node-confinement policy lets no agent delete another node's claim: the opted-in
      // claim stays, and the watcher says why in a Warning on it.
      const confined = cluster.nodePolicy;
      await deleteNode(cluster, "node-c");
      const since = await waitFor(() => goneSince(cluster, "node-c"), {
        description: "node-gone-since noted again",
        timeoutMs: 20_000,
      });
      for (const pv of onC.values()) {
        assert.ok(
          await pvExists(cluster, pv),
          `${pv}: not before the grace`,
        );
      }
      await waitFor(async () => !(await pvExists(cluster, onC.get("c-released")!)), {
        description: "the Released PV deleted",
        timeoutMs: 40_000,
      });
      assert.ok(Date.now() - Date.parse(since) >= 20_000, "after the grace");
      if (!confined) {
        await waitFor(async () => !(await pvExists(cluster, onC.get("c-bound-opt-in")!)), {
          description: "the opted-in claim deleted and its PV released",
          timeoutMs: 30_000,
        });
      }
      assert.ok(await claimExists(cluster, "c-bound"), "no opt-in: the claim stays");
      assert.ok(await pvExists(cluster, onC.get("c-bound")!), "a Bound PV is never deleted");
      const released = (name: string) =>
        `LostNodeVolumeReleased PersistentVolume/${onC.get(name)} x1`;
      const reported = (kind: string, name: string) => `LostNodeVolume ${kind}/${name} x1`;
      await expectEvents(
        cluster,
        [...LOST_REASONS, "LostNodeClaimNotDeleted"],
        [
          confined
            ? "LostNodeClaimNotDeleted PersistentVolumeClaim/c-bound-opt-in x1"
            : "LostNodeClaimDeleted PersistentVolumeClaim/c-bound-opt-in x1",
          reported("PersistentVolume", onC.get("c-bound")!),
          reported("PersistentVolume", onC.get("c-bound-opt-in")!),
          reported("PersistentVolumeClaim", "c-bound"),
          reported("PersistentVolumeClaim", "c-bound-opt-in"),
          ...(confined ? [] : [released("c-bound-opt-in")]),
          released("c-released"),
        ],
        "b-gone",
      );
      if (confined) {
        assert.ok(await claimExists(cluster, "c-bound-opt-in"), "the policy refused its deletion");
        const refusal = await eventMessage(cluster, "LostNodeClaimNotDeleted");
        assert.match(refusal, /node confinement: the agent of node node-\w+ may not DELETE/);
      }
      const explained = await runExplain(["-n", NS, "c-bound"], {
        KUBECONFIG: cluster.kubeconfigPath,
      });
      assert.equal(explained.code, 0, explained.stderr);
      const section = explained.stdout.split("\n\n").find((block) =>
        block.startsWith("Node loss:")
      );
      assert.match(section ?? "", /Node node-c does not exist/, explained.stdout);
      assert.match(section!, /its agent's Lease csi-node-provisioner-\w+-node-c expired at/);
      assert.match(section!, new RegExp(`saw the Node deleted at ${since.replace(/\./g, "\\.")}`));
      assert.match(section!, /\(--node-loss-release-after 20s\) a Released volume of that node/);
      const watchers = ["node-a", "node-b", "node-d"];
      const series = "csi_node_provisioner_lost_node_volumes_total";
      assert.equal(await total(agents, watchers, `${series}{action="released"}`), confined ? 1 : 2);
      // node-b deleted one claim at its start, a watcher the other (unless the policy refused it).
      assert.equal(
        await total(agents, watchers, `${series}{action="claim_deleted"}`),
        confined ? 1 : 2,
      );
      assert.ok(await total(agents, watchers, "csi_node_provisioner_lost_nodes") >= 1);
    },
  );
});
