/**
 * Differential test on democratic-csi's local-hostpath driver, a real
 * JavaScript driver whose volume IDs are the volume names and whose
 * CreateVolume answers capacity_bytes 0: upstream csi-provisioner and this
 * agent, in turn on node-a with the same flags (those democratic-csi's
 * chart gives csi-provisioner in its node DaemonSet, with no capacity
 * owner), must write the same PVs (the requested size as their capacity),
 * send the same CreateVolume, DeleteVolume and GetCapacity requests (as the
 * driver got them, through the recording proxy), write the same Events,
 * end each claim's deletion alike, and publish the same CSIStorageCapacity
 * objects, but for what necessarily differs (normalized as in
 * differential_support.ts and differential_lifecycle.ts).
 */
import assert from "node:assert/strict";
import type { V1StorageClass } from "@kubernetes/client-node";
import type { GetCapacityRequest } from "../../lib/csi/types.ts";
import { CSI_PARAMETER_PREFIX } from "../../lib/model/keys.ts";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { type ClaimInput, NAMESPACE } from "./differential_inputs.ts";
import {
  deleteAndCollect,
  deleteCapacities,
  type Deleted,
  distinct,
  driverFreeSpace,
  getCapacityRequests,
  publishedCapacities,
  removeRetained,
} from "./differential_lifecycle.ts";
import { compare, provisionClaim, type Provisioned } from "./differential_support.ts";
import { describeDifference } from "./object_diff.ts";
import { step } from "./support.ts";

/** The chart's csi-provisioner flags (examples/local-hostpath.yaml), but leader election and the owner. */
const ARGS = [
  "--v=5",
  "--timeout=90s",
  "--worker-threads=10",
  "--extra-create-metadata",
  "--node-deployment-immediate-binding=true",
  "--feature-gates=Topology=true",
  "--strict-topology=true",
  "--enable-capacity=true",
  "--capacity-ownerref-level=-1",
];

const CLASSES: V1StorageClass[] = [
  { metadata: { name: "dem-delete" }, provisioner: "", reclaimPolicy: "Delete" },
  { metadata: { name: "dem-retain" }, provisioner: "", reclaimPolicy: "Retain" },
  // democratic-csi's local-hostpath has no filesystem types: it refuses this one.
  {
    metadata: { name: "dem-xfs" },
    provisioner: "",
    parameters: { "csi.storage.k8s.io/fstype": "xfs" },
  },
];

const CLAIMS: ClaimInput[] = [
  { name: "plain", size: "1Gi", storageClass: "dem-delete", spec: {}, outcome: "bound" },
  { name: "decimal", size: "1500M", storageClass: "dem-delete", spec: {}, outcome: "bound" },
  { name: "kept", size: "200Mi", storageClass: "dem-retain", spec: {}, outcome: "bound" },
  {
    name: "rwop",
    size: "64Mi",
    storageClass: "dem-delete",
    spec: { accessModes: ["ReadWriteOncePod"] },
    outcome: "bound",
  },
  // Refused by the driver (InvalidArgument): an access type and a filesystem it has not.
  {
    name: "block",
    size: "64Mi",
    storageClass: "dem-delete",
    spec: { volumeMode: "Block" },
    outcome: "failed",
  },
  { name: "xfs", size: "64Mi", storageClass: "dem-xfs", spec: {}, outcome: "failed" },
];

type Kind = "upstream" | "ours";

/** What one agent did, from start to stop. */
interface Run {
  provisioned: Provisioned[];
  deleted: Map<string, Deleted>;
  capacities: Record<string, unknown>;
  getCapacityRequests: GetCapacityRequest[];
}

async function createClasses(cluster: RunningCluster): Promise<void> {
  await createNamespace(cluster.admin, NAMESPACE);
  for (const storageClass of CLASSES) {
    await cluster.admin.storage.createStorageClass({
      body: {
        volumeBindingMode: "WaitForFirstConsumer",
        ...storageClass,
        provisioner: cluster.driverName,
      },
    });
  }
}

/** One agent's run: capacity published, claims provisioned, then deleted; the agent stopped. */
async function runAgent(cluster: RunningCluster, kind: Kind, reference?: Run): Promise<Run> {
  const callsBefore = (await cluster.node("node-a").calls("GetCapacity")).length;
  const agent = await cluster.startAgent("node-a", { kind, rbac: "cluster-admin", args: ARGS });
  const classes = CLASSES.map((storageClass) => storageClass.metadata!.name!);
  const capacities = await publishedCapacities(cluster, classes, await driverFreeSpace(cluster));
  const provisioned = await Promise.all(
    CLAIMS.map((claim, index) =>
      provisionClaim(cluster, claim, reference?.provisioned[index]?.events ?? [])
    ),
  );
  const claims = await cluster.admin.core.listNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
  });
  const pvNames = new Map(
    claims.items.filter((claim) => claim.spec?.volumeName)
      .map((claim) => [claim.metadata!.name!, claim.spec!.volumeName!]),
  );
  const bound = CLAIMS.filter((claim) => claim.outcome === "bound").map((claim) => claim.name);
  assert.deepEqual([...pvNames.keys()].sort(), bound.sort(), `${kind}: the claims bound`);
  const failed = CLAIMS.filter((claim) => claim.outcome === "failed").map((claim) => claim.name);
  for (const name of failed) {
    await cluster.admin.core.deleteNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name });
  }
  const deleted = await deleteAndCollect(cluster, pvNames);
  const requests = await getCapacityRequests(cluster, callsBefore);
  await agent.stop();
  for (const [claim, outcome] of deleted) {
    if (outcome.pv !== "deleted") await removeRetained(cluster, pvNames.get(claim)!);
  }
  await deleteCapacities(cluster);
  return { provisioned, deleted, capacities, getCapacityRequests: requests };
}

/**
 * Upstream may call DeleteVolume twice for one PV: its DELETE of the PV
 * leaves the PV with its finalizer until the patch that follows, and that
 * update queues the PV again, which its shouldDelete still accepts (finalizer
 * present, Released, Delete). DeleteVolume is idempotent and the end is the
 * same, so the count is printed, not compared; the distinct requests are.
 */
function withoutCallCount(deleted: Deleted | undefined): unknown {
  return deleted && { ...deleted, deleteVolumeCalls: undefined };
}

/**
 * The distinct GetCapacity requests, without the reserved
 * `csi.storage.k8s.io/*` parameters, which this agent leaves out on purpose
 * and upstream passes (lib/capacity/plan/desired.ts getCapacityRequest).
 */
function capacityRequests(run: Run): unknown[] {
  return distinct(run.getCapacityRequests.map((request) => ({
    ...request,
    parameters: Object.fromEntries(
      Object.entries(request.parameters).filter(([key]) => !key.startsWith(CSI_PARAMETER_PREFIX)),
    ),
  })));
}

/** Both write the requested size: democratic-csi answers capacity_bytes 0, upstream's rule. */
function checkRequestedSize(run: Run, kind: Kind): void {
  CLAIMS.forEach((claim, index) => {
    const pv = run.provisioned[index]!.pv as
      | { spec: { capacity: { storage: string }; csi: { volumeHandle: string } } }
      | null;
    if (claim.outcome !== "bound") return;
    assert.equal(pv?.spec.capacity.storage, claim.size, `${kind}: ${claim.name}'s PV capacity`);
  });
}

Deno.test("upstream csi-provisioner and this agent provision, delete and publish alike on democratic-csi", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a"],
    driver: "democratic",
    driverOptions: { recordCalls: true },
    storageClasses: false,
  });
  await createClasses(cluster);
  const runs = {} as Record<Kind, Run>;
  for (const kind of ["upstream", "ours"] as const) {
    await step(t, cluster, `${kind} publishes capacity, provisions and deletes`, async () => {
      runs[kind] = await runAgent(cluster, kind, runs.upstream);
    });
  }
  const { upstream, ours } = runs;
  const names = { expectedName: "upstream", actualName: "ours" };
  let failed = false;
  const check = async (title: string, body: () => void | Promise<void>) => {
    failed = !(await t.step(title, body)) || failed;
  };
  await check("both write the requested size as the PV's capacity (the driver answers 0)", () => {
    checkRequestedSize(upstream, "upstream");
    checkRequestedSize(ours, "ours");
  });
  for (const [index, { name }] of CLAIMS.entries()) {
    await check(
      `claim ${name}: same PV, CreateVolume request and Events`,
      () => compare(ours.provisioned[index]!, upstream.provisioned[index]!),
    );
  }
  for (const [name, outcome] of upstream.deleted) {
    await check(`claim ${name} deleted: same end, DeleteVolume requests and volume left`, () => {
      const calls = ours.deleted.get(name)?.deleteVolumeCalls;
      console.log(
        `${name}: DeleteVolume calls: upstream ${outcome.deleteVolumeCalls}, ours ${calls}`,
      );
      const difference = describeDifference(
        withoutCallCount(ours.deleted.get(name)),
        withoutCallCount(outcome),
        { what: "the deletions", ...names },
      );
      if (difference !== "") throw new Error(difference);
    });
  }
  await check("same CSIStorageCapacity objects and GetCapacity requests", () => {
    const differences = [
      describeDifference(ours.capacities, upstream.capacities, {
        what: "the CSIStorageCapacity objects",
        ...names,
      }),
      describeDifference(capacityRequests(ours), capacityRequests(upstream), {
        what: "the GetCapacity requests",
        ...names,
      }),
    ].filter((difference) => difference !== "");
    if (differences.length > 0) throw new Error(differences.join("\n\n"));
  });
  if (failed) console.error(await cluster.tailLogs(30));
  assert.ok(!failed, "a difference between upstream and this agent (see the steps above)");
});
