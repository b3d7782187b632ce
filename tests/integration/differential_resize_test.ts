/**
 * Volume expansion against the reference: upstream's external-resizer
 * v2.2.1 (built from its pinned archive, peers.ts) and this agent's
 * --enable-resizer expand claims on the same one-node cluster with the
 * upstream hostpath driver, one after the other; the PV and claim fields
 * they write, their Events and the ControllerExpandVolume requests must be
 * the same after a successful expansion, a failed one (beyond the driver's
 * --max-volume-size) and its recovery (the request lowered). external-resizer
 * runs with leader election in the agents' namespace, so the agent's start
 * with --enable-resizer beside it is refused too (exit code 2).
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { ensurePeerBinaries } from "../cluster/peers.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { assertSameJson } from "./object_diff.ts";
import { claimEvents, startOurAgents, step } from "./support.ts";
import {
  allowExpansion,
  boundClaimOf,
  MAX_VOLUME_BYTES,
  requestSize,
  waitForView,
} from "./resize_support.ts";

const NS = "resize-diff";
const NODE = "node-a";
const RETRIES = ["--retry-interval-start=200ms", "--retry-interval-max=2s"];
const RESIZE_REASONS = new Set([
  "Resizing",
  "VolumeResizeFailed",
  "FileSystemResizeRequired",
  "VolumeResizeSuccessful",
]);
const RESIZE_ANNOTATIONS = [
  "volume.kubernetes.io/node-expansion-not-required",
  "volume.alpha.kubernetes.io/pre-resize-capacity",
];

/** What a resizer left on one claim, with the PV's name and handle replaced. */
async function written(cluster: RunningCluster, name: string): Promise<unknown> {
  const ref = { namespace: NS, name };
  const claim = await cluster.admin.core.readNamespacedPersistentVolumeClaim(ref);
  const pvName = claim.spec!.volumeName!;
  const pv = await cluster.admin.core.readPersistentVolume({ name: pvName });
  const handle = pv.spec!.csi!.volumeHandle;
  const pick = (annotations: Record<string, string> | undefined) =>
    Object.fromEntries(
      RESIZE_ANNOTATIONS.flatMap((key) =>
        annotations?.[key] === undefined ? [] : [[key, annotations[key]]]
      ),
    );
  const events = (await claimEvents(cluster, ref))
    .filter((event) => RESIZE_REASONS.has(event.reason ?? ""))
    .map((event) => `${event.type} ${event.reason}: ${event.message}`);
  const calls = (await cluster.node(NODE).calls("ControllerExpandVolume"))
    .map((call) => call.request as { volume_id: string })
    .filter((request) => request.volume_id === handle);
  const value = {
    pv: { capacity: pv.spec?.capacity, annotations: pick(pv.metadata?.annotations) },
    claim: {
      annotations: pick(claim.metadata?.annotations),
      capacity: claim.status?.capacity,
      allocatedResources: claim.status?.allocatedResources,
      allocatedResourceStatuses: claim.status?.allocatedResourceStatuses,
      conditions: (claim.status?.conditions ?? []).map(({ type, status, reason, message }) => ({
        type,
        status,
        reason,
        message,
      })),
    },
    events: [...new Set(events)].sort(),
    requests: [...new Set(calls.map((request) => JSON.stringify(request)))].sort(),
  };
  return JSON.parse(JSON.stringify(value).replaceAll(pvName, "<pv>").replaceAll(handle, "<id>"));
}

/** The three cases, on claims named PREFIX-grow and PREFIX-fail; what each left. */
async function expandAll(cluster: RunningCluster, prefix: string) {
  const className = cluster.storageClassName("fast");
  const grow = { namespace: NS, name: `${prefix}-grow` };
  const fail = { namespace: NS, name: `${prefix}-fail` };
  await boundClaimOf(cluster, grow, { node: NODE, className });
  await boundClaimOf(cluster, fail, { node: NODE, className });
  await requestSize(cluster, grow, "2Gi");
  await requestSize(cluster, fail, "20Gi");
  await waitForView(cluster, grow, (v) => v.status === "NodeResizePending", `${grow.name} grown`);
  await waitForView(
    cluster,
    fail,
    (v) => v.conditions.includes("ControllerResizeError"),
    `${fail.name} failed`,
  );
  // Both retry once more before the slow set holds the same size back; let that settle.
  await waitForEvents(cluster, fail.name, 2);
  const success = await written(cluster, grow.name);
  const failure = await written(cluster, fail.name);
  await requestSize(cluster, fail, "3Gi");
  await waitForView(
    cluster,
    fail,
    (v) => v.status === "NodeResizePending",
    `${fail.name} recovered`,
  );
  await waitForEvents(cluster, fail.name, 3);
  return { success, failure, recovery: await written(cluster, fail.name) };
}

/** Waits until the claim has `count` resize Events of kinds (type and reason) written. */
async function waitForEvents(cluster: RunningCluster, name: string, count: number) {
  await waitFor(async () => {
    const events = await claimEvents(cluster, { namespace: NS, name });
    const kinds = new Set(
      events.filter((event) => RESIZE_REASONS.has(event.reason ?? "")).map((event) =>
        `${event.reason} ${event.message}`
      ),
    );
    return kinds.size >= count;
  }, { description: `${count} resize Events on ${name}`, timeoutMs: 30_000 });
  await new Promise((resolve) => setTimeout(resolve, 1500));
}

Deno.test("the agent's expansions write what external-resizer v2.2.1 writes", async (t) => {
  const { csiResizer } = await ensurePeerBinaries({
    hostpath: false,
    snapshotter: false,
    resizer: true,
  });
  await using cluster = await startCluster({
    nodes: [NODE],
    storageCapacity: false,
    driverOptions: {
      capacity: { fast: "10Gi" },
      recordCalls: true,
      extraArgs: [`--max-volume-size=${MAX_VOLUME_BYTES}`],
    },
  });
  await allowExpansion(cluster, cluster.storageClassName("fast"));
  await createNamespace(cluster.admin, NS);
  await startOurAgents(cluster, { args: RETRIES });
  const identity = { namespace: cluster.agentNamespace, serviceAccount: "external-resizer" };
  const kubeconfig = await cluster.identity(identity);
  await cluster.grantClusterAdmin(identity);
  const resizer = cluster.spawnPeer({
    name: "external-resizer",
    command: csiResizer!,
    args: [
      `--csi-address=${cluster.node(NODE).csiSocket}`,
      `--kubeconfig=${kubeconfig}`,
      "--leader-election",
      `--leader-election-namespace=${cluster.agentNamespace}`,
      "--v=4",
      ...RETRIES,
    ],
    env: { KUBECONFIG: kubeconfig },
  });
  const theirs = await expandAll(cluster, "ext");

  await step(t, cluster, "--enable-resizer beside a running external-resizer exits 2", async () => {
    const agent = cluster.node(NODE).agent!;
    await agent.stop();
    await cluster.startAgent(NODE, {
      kind: "ours",
      rbac: "cluster-admin",
      args: ["--enable-resizer", ...RETRIES],
    });
    const status = await cluster.node(NODE).agent!.process.exited;
    assert.equal(status.code, 2);
    const log = await Deno.readTextFile(cluster.node(NODE).agent!.logFile);
    assert.match(
      log,
      /external-resizer holds Lease csi-provisioner\/external-resizer-hostpath-csi-k8s-io/,
    );
  });

  await resizer.stop();
  // Past the Lease's 15 s: the agent takes the stale Lease for a resizer that is gone.
  await new Promise((resolve) => setTimeout(resolve, 16_000));
  await startOurAgents(cluster, { args: ["--enable-resizer", ...RETRIES] });
  const ours = await expandAll(cluster, "our");
  for (const [what, value] of Object.entries(ours)) {
    await step(t, cluster, `after ${what}: the same PV, claim, Events and requests`, () => {
      assertSameJson(value, theirs[what as keyof typeof theirs], {
        what: `${what}: what was written`,
        actualName: "csi-node-provisioner",
        expectedName: "external-resizer",
      });
      return Promise.resolve();
    });
  }
});
