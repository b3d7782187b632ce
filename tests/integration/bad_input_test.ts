/**
 * Bad StorageClass and claim inputs, on the real control plane: each claim is
 * already selected to a node, and the user must see one precise Warning on it
 * while nothing is created (no CreateVolume, or no volume where the driver
 * refuses; no PV) and the agent keeps running. The cases are in bad_inputs.ts.
 */
import assert from "node:assert/strict";
import { ApiException, type V1PersistentVolumeClaim } from "@kubernetes/client-node";
import { startCluster } from "../cluster/cluster.ts";
import type { ClusterNode, RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import {
  BAD_INPUTS,
  type BadInput,
  NAMESPACE,
  OTHER_DRIVER_VAC,
  snapshotSource,
  UNACCEPTED_PARAMETER_VAC,
} from "./bad_inputs.ts";
import {
  agentEvents,
  claimVolumes,
  createVolumeCallsFor,
  selectedClaim,
  startOurAgents,
  step,
} from "./support.ts";

const FAST = "csi-hostpath-fast";
const AGENT_ARGS = ["--retry-interval-start=500ms", "--retry-interval-max=5s", "-v=4"];

/**
 * Inputs the brief asked for that the API server (Kubernetes 1.36) changes
 * or refuses before any provisioner sees them. The test checks each stays so:
 * if one starts getting through, it must become a case of bad_inputs.ts.
 */
interface ApiRefusedInput {
  name: string;
  title: string;
  spec: Partial<NonNullable<V1PersistentVolumeClaim["spec"]>>;
  /** "refused": the create fails with 422; otherwise what the stored claim shows instead. */
  outcome:
    | { kind: "refused"; message: RegExp }
    | { kind: "stored"; check: (claim: V1PersistentVolumeClaim) => unknown; expected: unknown };
}

const API_REFUSED: readonly ApiRefusedInput[] = [
  {
    name: "size-zero",
    title: "a zero size",
    spec: { resources: { requests: { storage: "0" } } },
    outcome: { kind: "refused", message: /spec\.resources\[storage\].*must be greater than zero/ },
  },
  {
    name: "size-100ei",
    title: "100Ei: clamped to 2^63-1 bytes, a valid int64 the driver judges",
    spec: { resources: { requests: { storage: "100Ei" } } },
    outcome: {
      kind: "stored",
      check: (claim) => claim.spec?.resources?.requests?.storage,
      expected: "9223372036854775807",
    },
  },
  {
    name: "snapshot-group-dropped",
    title: "spec.dataSource of kind VolumeSnapshot in another API group: dropped",
    spec: { dataSource: snapshotSource("example.com") },
    outcome: {
      kind: "stored",
      check: (claim) => [claim.spec?.dataSource ?? null, claim.spec?.dataSourceRef ?? null],
      expected: [null, null],
    },
  },
];

Deno.test("bad StorageClass and claim inputs: one precise Warning each, nothing created, the agent keeps working", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b"],
    driverOptions: {
      capacity: { fast: "10Gi" },
      recordCalls: true,
      // MODIFY_VOLUME so that the VolumeAttributesClass cases reach the class checks.
      extraArgs: ["--enable-controller-modify-volume", "--accepted-mutable-parameter-names=iops"],
    },
    storageCapacity: false,
  });
  const { admin } = cluster;
  await Promise.all([
    startOurAgents(cluster, { args: AGENT_ARGS, nodes: ["node-a"] }),
    startOurAgents(cluster, { args: [...AGENT_ARGS, "--strict-topology"], nodes: ["node-b"] }),
    createNamespace(admin, NAMESPACE),
    admin.storage.createVolumeAttributesClass({ body: OTHER_DRIVER_VAC }),
    admin.storage.createVolumeAttributesClass({ body: UNACCEPTED_PARAMETER_VAC }),
  ]);

  await step(
    t,
    cluster,
    "inputs the API server refuses or rewrites never reach the agent",
    () => Promise.all(API_REFUSED.map((input) => checkApiRefused(cluster, input))).then(() => {}),
  );

  const uids = new Map<string, string>();
  await step(t, cluster, `${BAD_INPUTS.length} bad inputs created at once`, async () => {
    await Promise.all(BAD_INPUTS.map(async (input) => {
      uids.set(input.name, await createBadInput(cluster, input));
    }));
  });

  let failed = false;
  for (const input of BAD_INPUTS) {
    const passed = await t.step(input.title, () => checkBadInput(cluster, input, uids));
    failed ||= !passed;
  }
  if (failed) console.error(await cluster.tailLogs(30));

  await step(t, cluster, "afterwards a good claim provisions on node-a", async () => {
    await createSelectedClaim(cluster, "good", { storageClass: FAST });
    const claim = await waitForClaimBound(admin, { namespace: NAMESPACE, name: "good" });
    assert.equal((await claimVolumes(cluster, claim.metadata!.uid!)).length, 1);
  });
  await step(
    t,
    cluster,
    "a Block claim whose class names an fsType provisions (fsType ignored, as upstream)",
    () => checkBlockIgnoresFsType(cluster),
  );
  for (const node of cluster.nodes) assert.ok(node.agent?.running, `${node.name}'s agent runs`);
  assert.ok(!failed, "every bad input case passed");
});

/**
 * Upstream ignores fsType for Block volumes (a mount option of filesystems
 * only), so this is not a bad input: it must provision, with block
 * capabilities and no fsType on the PV.
 */
async function checkBlockIgnoresFsType(cluster: RunningCluster): Promise<void> {
  const { admin } = cluster;
  await createClass(cluster, "block-fstype", {
    parameters: { kind: "fast", "csi.storage.k8s.io/fstype": "xfs" },
  });
  await createSelectedClaim(cluster, "block", {
    storageClass: "block-fstype",
    spec: { volumeMode: "Block" },
  });
  const claim = await waitForClaimBound(admin, { namespace: NAMESPACE, name: "block" });
  const pv = await admin.core.readPersistentVolume({ name: claim.spec!.volumeName! });
  assert.equal(pv.spec?.volumeMode, "Block");
  assert.equal(pv.spec?.csi?.fsType, undefined, "no fsType on a Block PV");
  const [call] = await createVolumeCallsFor(cluster.node("node-a"), claim.metadata!.uid!);
  const request = call?.request as { volume_capabilities?: { block?: unknown; mount?: unknown }[] };
  const capabilities = request.volume_capabilities ?? [];
  assert.ok(capabilities.length > 0 && capabilities.every((c) => c.block && !c.mount), "block");
}

/** The class the case's claim names: its own, a missing one, or the cluster's csi-hostpath-fast. */
function classOf(input: BadInput): string {
  return input.storageClass ? `bad-${input.name}` : input.claimClass ?? FAST;
}

/** Creates the case's class (if any) and its claim, selected to its node; returns the claim UID. */
async function createBadInput(cluster: RunningCluster, input: BadInput): Promise<string> {
  const className = classOf(input);
  if (input.storageClass) await createClass(cluster, className, input.storageClass);
  const claim = await createSelectedClaim(cluster, input.name, {
    storageClass: className,
    node: input.node ?? "node-a",
    ...input.claim,
  });
  return claim.metadata!.uid!;
}

/** The user's view of one bad input, then the absence of every side effect. */
async function checkBadInput(
  cluster: RunningCluster,
  input: BadInput,
  uids: Map<string, string>,
): Promise<void> {
  const ref = { namespace: NAMESPACE, name: input.name };
  const uid = uids.get(input.name)!;
  const at = { namespace: NAMESPACE, claim: input.name, storageClass: classOf(input) };
  const expected = input.message(at);
  const failures = await waitFor(async () => {
    const events = (await agentEvents(cluster, ref)).filter((e) =>
      e.reason === "ProvisioningFailed"
    );
    return events.length > 0 ? events : undefined;
  }, { description: `a ProvisioningFailed event from the agent on ${input.name}` });
  assert.deepEqual(
    failures.map((event) => [event.type, event.message]),
    [["Warning", expected]],
    "one Warning, with exactly this message",
  );
  const node = cluster.node(input.node ?? "node-a");
  const calls = await createVolumeCallsFor(node, uid);
  if (input.driverRefuses) {
    assert.ok(calls.length > 0, "the driver was asked");
    assert.ok(calls.every((call) => call.codeName === input.driverRefuses), "and refused");
    const volumes = (await node.volumes()).filter((v) => v.name === `pvc-${uid}`);
    assert.deepEqual(volumes, [], "no volume in the driver");
  } else {
    assert.deepEqual(calls, [], "no CreateVolume");
  }
  assert.deepEqual(await claimVolumes(cluster, uid), [], "no PV");
  assert.ok(node.agent?.running, `${node.name}'s agent still runs`);
}

/** An input the API server must refuse (422) or store changed, as API_REFUSED records. */
async function checkApiRefused(cluster: RunningCluster, input: ApiRefusedInput): Promise<void> {
  const body: V1PersistentVolumeClaim = {
    metadata: { name: input.name },
    spec: {
      accessModes: ["ReadWriteOnce"],
      storageClassName: FAST,
      resources: { requests: { storage: "1Gi" } },
      ...input.spec,
    },
  };
  const create = cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
    body,
  });
  if (input.outcome.kind === "refused") {
    const error = await create.then(() => undefined, (error: unknown) => error);
    assert.ok(error instanceof ApiException, `${input.title}: refused by the API server`);
    assert.equal(error.code, 422, input.title);
    assert.match(String(error.body), input.outcome.message, input.title);
    return;
  }
  assert.deepEqual(input.outcome.check(await create), input.outcome.expected, input.title);
}

async function createClass(
  cluster: RunningCluster,
  name: string,
  fields: NonNullable<BadInput["storageClass"]>,
): Promise<void> {
  await cluster.admin.storage.createStorageClass({
    body: {
      metadata: { name },
      provisioner: cluster.driverName,
      parameters: { kind: "fast" },
      volumeBindingMode: "WaitForFirstConsumer",
      ...fields,
    },
  });
}

function createSelectedClaim(
  cluster: RunningCluster,
  name: string,
  options: { storageClass: string; node?: ClusterNode["name"] } & NonNullable<BadInput["claim"]>,
): Promise<V1PersistentVolumeClaim> {
  return cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
    body: selectedClaim(name, {
      node: options.node ?? "node-a",
      driverName: cluster.driverName,
      storageClass: options.storageClass,
      ...(options.size ? { size: options.size } : {}),
      ...(options.spec ? { spec: options.spec } : {}),
      ...(options.annotations ? { annotations: options.annotations } : {}),
    }),
  });
}
