/**
 * Differential test of data sources on the upstream hostpath driver with
 * the snapshot controllers: a restore and a clone (and the ones upstream
 * refuses, with its messages), provisioned once by upstream csi-provisioner
 * and once by this agent on node-a with the same flags, must give the same
 * PVs, the same CreateVolume requests (content source included, as the
 * driver got them through the recording proxy) and the same Events, but for
 * what necessarily differs (normalized as in differential_support.ts).
 */
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { createVolumeSnapshot, waitForSnapshotReady } from "../cluster/snapshots.ts";
import { createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import type { ClaimInput } from "./differential_inputs.ts";
import { NAMESPACE } from "./differential_inputs.ts";
import { compare, deleteClaims, provisionClaim, type Provisioned } from "./differential_support.ts";
import { selectedClaim, step } from "./support.ts";

const CLASS = "csi-hostpath-fast";
const ARGS = ["--feature-gates=Topology=true", "--strict-topology", "-v=5"];
const SNAPSHOT = { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot" };
const CLAIM = { kind: "PersistentVolumeClaim" };

const CLAIMS: ClaimInput[] = [
  {
    name: "restore",
    size: "1Gi",
    storageClass: CLASS,
    spec: { dataSource: { ...SNAPSHOT, name: "origin-snap" } },
    outcome: "bound",
  },
  {
    name: "restore-bigger",
    size: "2Gi",
    storageClass: CLASS,
    spec: { dataSourceRef: { ...SNAPSHOT, name: "origin-snap" } },
    outcome: "bound",
  },
  {
    name: "clone",
    size: "1Gi",
    storageClass: CLASS,
    spec: { dataSource: { ...CLAIM, name: "origin" } },
    outcome: "bound",
  },
  {
    name: "restore-too-small",
    size: "512Mi",
    storageClass: CLASS,
    spec: { dataSource: { ...SNAPSHOT, name: "origin-snap" } },
    outcome: "failed",
  },
  {
    name: "clone-too-small",
    size: "512Mi",
    storageClass: CLASS,
    spec: { dataSource: { ...CLAIM, name: "origin" } },
    outcome: "failed",
  },
  {
    name: "restore-missing",
    size: "1Gi",
    storageClass: CLASS,
    spec: { dataSource: { ...SNAPSHOT, name: "no-such-snapshot" } },
    outcome: "failed",
  },
  {
    name: "clone-missing",
    size: "1Gi",
    storageClass: CLASS,
    spec: { dataSource: { ...CLAIM, name: "no-such-claim" } },
    outcome: "failed",
  },
  {
    name: "restore-block",
    size: "1Gi",
    storageClass: CLASS,
    spec: { volumeMode: "Block", dataSource: { ...SNAPSHOT, name: "origin-snap" } },
    outcome: "failed",
  },
];

/** The source: a 1Gi claim on node-a (provisioned by this agent) and a snapshot of it. */
async function createSources(cluster: RunningCluster): Promise<void> {
  await createNamespace(cluster.admin, NAMESPACE);
  const agent = await cluster.startAgent("node-a", { kind: "ours", rbac: "cluster-admin" });
  await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
    body: selectedClaim("origin", {
      node: "node-a",
      storageClass: CLASS,
      driverName: cluster.driverName,
    }),
  });
  await waitForClaimBound(cluster.admin, { namespace: NAMESPACE, name: "origin" });
  await agent.stop();
  await createVolumeSnapshot(cluster.admin, {
    namespace: NAMESPACE,
    name: "origin-snap",
    claim: "origin",
  });
  await waitForSnapshotReady(cluster.admin, { namespace: NAMESPACE, name: "origin-snap" });
}

Deno.test("upstream csi-provisioner and this agent restore and clone alike on the hostpath driver", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b"],
    driverOptions: { capacity: { fast: "20Gi" }, recordCalls: true },
    snapshots: true,
    storageCapacity: false,
  });
  await createSources(cluster);
  const results: Record<"upstream" | "ours", Provisioned[]> = { upstream: [], ours: [] };
  for (const kind of ["upstream", "ours"] as const) {
    await step(t, cluster, `${kind} provisions the restores and clones`, async () => {
      const agent = await cluster.startAgent("node-a", { kind, rbac: "cluster-admin", args: ARGS });
      const reference = kind === "ours" ? results.upstream : [];
      results[kind] = [];
      // One at a time: the clones of one source must not hold each other up.
      for (const [index, claim] of CLAIMS.entries()) {
        results[kind].push(await provisionClaim(cluster, claim, reference[index]?.events ?? []));
      }
      await agent.stop();
      await deleteClaims(cluster, CLAIMS.map((claim) => claim.name));
    });
  }
  let failed = false;
  for (const [index, { name }] of CLAIMS.entries()) {
    const passed = await t.step(
      `claim ${name}: same PV, CreateVolume request and Events`,
      () => compare(results.ours[index]!, results.upstream[index]!),
    );
    failed ||= !passed;
  }
  if (failed) console.error(await cluster.tailLogs(30));
});
