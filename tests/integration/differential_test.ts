/**
 * Differential test: the same StorageClass and claims, provisioned once by
 * upstream csi-provisioner and once by this agent on the same node with the
 * same flags, must give the same PVs, the same CreateVolume requests and the
 * same Events, but for what necessarily differs (names, UIDs, identity,
 * timestamps), which is normalized field by field below.
 *
 * Each claim is created again under the same name in the same namespace, so
 * that everything derived from the claim's name and namespace must match too.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { waitForClaimBound } from "../cluster/workloads.ts";
import {
  type ClaimInput,
  CLAIMS,
  createInputs,
  DIFFERENTIAL_CLASS,
  NAMESPACE,
} from "./differential_inputs.ts";
import { describeDifference } from "./object_diff.ts";
import { createVolumeCallsFor, selectedClaim, step } from "./support.ts";

/** Identical for both agents: the flags upstream recommends for node deployment, and more. */
const AGENT_ARGS = [
  "--strict-topology",
  "--feature-gates=Topology=true",
  "--extra-create-metadata",
  "--default-fstype=ext4",
  "-v=5",
];

/** What one provisioner produced for one claim, as raw API objects. */
interface Provisioned {
  pv: unknown;
  request: unknown;
  events: { type: string; reason: string; message: string }[];
}

Deno.test("upstream csi-provisioner and this agent provision the same PVs from the same inputs", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a"],
    driverOptions: {
      capacity: { fast: "10Gi" },
      controllerCapabilities: ["CREATE_DELETE_VOLUME", "GET_CAPACITY", "MODIFY_VOLUME"],
    },
    storageCapacity: false,
  });
  await createInputs(cluster);

  let upstream: Provisioned[] = [];
  await step(t, cluster, "upstream csi-provisioner provisions the claims", async () => {
    // cluster-admin, not upstream's rbac.yaml: the class names a provisioner Secret.
    const agent = await cluster.startAgent("node-a", {
      kind: "upstream",
      rbac: "cluster-admin",
      args: AGENT_ARGS,
    });
    upstream = await Promise.all(CLAIMS.map((claim) => provisionClaim(cluster, claim)));
    await agent.stop();
    await deleteClaims(cluster);
  });

  let ours: Provisioned[] = [];
  await step(t, cluster, "this agent provisions the same claims again", async () => {
    await cluster.startAgent("node-a", { kind: "ours", rbac: "cluster-admin", args: AGENT_ARGS });
    ours = await Promise.all(
      CLAIMS.map((claim, index) => provisionClaim(cluster, claim, upstream[index]!.events)),
    );
  });

  let failed = false;
  for (const [index, { name }] of CLAIMS.entries()) {
    const title = `claim ${name}: same PV, CreateVolume request and Events`;
    const passed = await t.step(title, () => compare(ours[index]!, upstream[index]!));
    failed ||= !passed;
  }
  if (failed) console.error(await cluster.tailLogs(30));
});

/** Every difference between what the two agents produced for one claim, or nothing. */
function compare(ours: Provisioned, upstream: Provisioned): Promise<void> {
  const names = { expectedName: "upstream", actualName: "ours" };
  const differences = [
    describeDifference(normalizeVolume(ours.pv), normalizeVolume(upstream.pv), {
      what: "the PVs",
      ...names,
    }),
    describeDifference(ours.request, upstream.request, {
      what: "the CreateVolume requests",
      ...names,
    }),
    describeDifference(withoutLocations(ours.events), upstream.events, {
      what: "the claim's Events",
      ...names,
    }),
  ].filter((difference) => difference !== "");
  if (differences.length > 0) return Promise.reject(new Error(differences.join("\n\n")));
  return Promise.resolve();
}

/**
 * Creates the claim (selected to node-a) and waits for its outcome: bound
 * with the success Event, or a ProvisioningFailed Event. Collects the PV, the
 * driver's first request and the Events, with the volume name (pvc-<claim
 * uid>) replaced wherever it appears. `reference`: the other agent's Events,
 * which are given a moment to show up too (Events are written asynchronously).
 */
async function provisionClaim(
  cluster: RunningCluster,
  input: ClaimInput,
  reference: Provisioned["events"] = [],
): Promise<Provisioned> {
  const claim = await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
    body: selectedClaim(input.name, {
      node: "node-a",
      storageClass: input.storageClass ?? DIFFERENTIAL_CLASS,
      size: input.size,
      driverName: cluster.driverName,
      spec: input.spec,
    }),
  });
  const uid = claim.metadata!.uid!;
  const volumeName = `pvc-${uid}`;
  if (input.outcome === "bound") {
    await waitForClaimBound(cluster.admin, { namespace: NAMESPACE, name: input.name });
  }
  const outcome = input.outcome === "bound" ? "ProvisioningSucceeded" : "ProvisioningFailed";
  await waitForReasons(cluster, { uid, name: input.name }, [outcome], 30_000);
  const references = reference.map((event) => event.reason);
  const events = await waitForReasons(cluster, { uid, name: input.name }, references, 5_000)
    // Missing some of the other agent's reasons: compare what there is, the diff tells.
    .catch(() => provisionerEvents(cluster, uid));
  const calls = await createVolumeCallsFor(cluster.node("node-a"), uid);
  if (input.outcome === "bound") {
    assert.equal(calls.length, 1, `one CreateVolume for ${input.name}`);
  }
  const raw = input.outcome === "bound"
    ? await cluster.kubectl(["get", "pv", volumeName, "-o", "json"])
    : "null";
  const placeholder = (text: string) => JSON.parse(text.replaceAll(volumeName, "<pv name>"));
  return {
    pv: placeholder(raw),
    request: placeholder(JSON.stringify(calls[0]?.request ?? null)),
    events: events.map((event) => ({
      type: event.type ?? "",
      reason: event.reason ?? "",
      message: (event.message ?? "").replaceAll(volumeName, "<pv name>"),
    })).sort((a, b) => a.reason.localeCompare(b.reason)),
  };
}

/**
 * Our messages without the location this agent appends on purpose to
 * upstream's text (lib/model/messages.ts), e.g. ` (PersistentVolumeClaim
 * "ns/name", spec.selector)`: the rest must be upstream's wording.
 */
function withoutLocations(events: Provisioned["events"]): Provisioned["events"] {
  const location = / \((?:PersistentVolumeClaim|StorageClass) "[^"]+", [^()]+\)$/;
  return events.map((event) => ({ ...event, message: event.message.replace(location, "") }));
}

/** The provisioner's Events on this claim (by UID: the two claims of a name are alike). */
async function provisionerEvents(cluster: RunningCluster, uid: string) {
  const list = await cluster.admin.core.listNamespacedEvent({
    namespace: NAMESPACE,
    fieldSelector: `involvedObject.uid=${uid}`,
  });
  return list.items.filter((event) =>
    (event.source?.component ?? "").startsWith(`${cluster.driverName}_`)
  );
}

/** Waits until the provisioner's Events on the claim include every reason given. */
function waitForReasons(
  cluster: RunningCluster,
  claim: { uid: string; name: string },
  reasons: string[],
  timeoutMs: number,
) {
  return waitFor(async () => {
    const events = await provisionerEvents(cluster, claim.uid);
    const seen = new Set(events.map((event) => event.reason));
    return reasons.every((reason) => seen.has(reason)) && events;
  }, { description: `${reasons.join(", ")} on ${NAMESPACE}/${claim.name}`, timeoutMs });
}

/** Deletes the claims and waits until they are gone, so that new ones can take their names. */
async function deleteClaims(cluster: RunningCluster): Promise<void> {
  const { core } = cluster.admin;
  for (const { name } of CLAIMS) {
    await core.deleteNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name });
  }
  await waitFor(async () => {
    const list = await core.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE });
    return list.items.length === 0;
  }, { description: `the claims in ${NAMESPACE} deleted` });
}

/**
 * The PV with what must differ between two provisionings replaced by a
 * placeholder, only where present (so that presence is still compared).
 * The PV name (pvc-<claim uid>) was replaced already, wherever it appears.
 */
function normalizeVolume(pv: unknown): unknown {
  if (pv === null) return null;
  const copy = structuredClone(pv) as {
    metadata: Record<string, unknown>;
    spec: { claimRef?: Record<string, unknown>; csi?: Record<string, unknown> };
    status?: Record<string, unknown>;
  };
  // The API server's: set at creation, and per write.
  replace(copy.metadata, "uid", "<uid>");
  replace(copy.metadata, "resourceVersion", "<resourceVersion>");
  replace(copy.metadata, "creationTimestamp", "<time>");
  // Who wrote which field, when: manager names (csi-provisioner, ours) and times differ.
  replace(copy.metadata, "managedFields", "<managedFields>");
  // The claims are alike but for their UID; resourceVersion is the API server's.
  replace(copy.spec.claimRef, "uid", "<claim uid>");
  replace(copy.spec.claimRef, "resourceVersion", "<claim resourceVersion>");
  // The test driver's volume ID is a fresh UUID per volume.
  replace(copy.spec.csi, "volumeHandle", "<volume handle>");
  // <start ms>-<random>-<driver>-<node>: unique per process by design.
  const attributes = copy.spec.csi?.volumeAttributes as Record<string, unknown> | undefined;
  replace(attributes, "storage.kubernetes.io/csiProvisionerIdentity", "<identity>");
  replace(copy.status, "lastPhaseTransitionTime", "<time>");
  return copy;
}

function replace(object: Record<string, unknown> | undefined, key: string, text: string): void {
  if (object !== undefined && Object.hasOwn(object, key)) object[key] = text;
}
