/**
 * What differential_test.ts collects for one claim from one agent: the PV,
 * the CreateVolume request node-a's driver got (through the recording proxy)
 * and the provisioner's Events on the claim, normalized where two
 * provisionings must differ.
 */
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { waitForClaimBound } from "../cluster/workloads.ts";
import { type ClaimInput, NAMESPACE } from "./differential_inputs.ts";
import { nodeLabels } from "../../lib/model/labels.ts";
import { describeDifference } from "./object_diff.ts";
import { createVolumeCallsFor, selectedClaim } from "./support.ts";
import { PV_PROTECTION_FINALIZER } from "../../lib/model/keys.ts";

/** What one provisioner produced for one claim. */
export interface Provisioned {
  pv: unknown;
  /** The request as the driver got it, its secret values replaced. */
  request: unknown;
  /** The request's secrets, unstripped: compared, never printed. */
  secrets: Record<string, string> | undefined;
  events: { type: string; reason: string; message: string }[];
}

/**
 * Creates the claim (selected to node-a) and waits for its outcome: bound
 * with the success Event, or a ProvisioningFailed Event. Collects the PV, the
 * driver's first request and the Events, with the volume name (pvc-<claim
 * uid>) replaced wherever it appears. `reference`: the other agent's Events,
 * which are given a moment to show up too (Events are written asynchronously).
 */
export async function provisionClaim(
  cluster: RunningCluster,
  input: ClaimInput,
  reference: Provisioned["events"] = [],
): Promise<Provisioned> {
  const body = selectedClaim(input.name, {
    node: "node-a",
    storageClass: input.storageClass ?? "",
    size: input.size,
    driverName: cluster.driverName,
    spec: input.spec,
    ...(input.annotations ? { annotations: input.annotations } : {}),
  });
  if (input.storageClass === undefined) delete body.spec!.storageClassName;
  const claim = await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
    body,
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
  const raw = input.outcome === "bound" ? await settledVolume(cluster, volumeName) : "null";
  const placeholder = (text: string) => JSON.parse(text.replaceAll(volumeName, "<pv name>"));
  return {
    pv: normalizeVolume(placeholder(raw)),
    request: placeholder(JSON.stringify(calls[0]?.request ?? null)),
    secrets: calls[0] ? cluster.node("node-a").secretsOf(calls[0]) : undefined,
    events: events.map((event) => ({
      type: event.type ?? "",
      reason: event.reason ?? "",
      message: (event.message ?? "").replaceAll(volumeName, "<pv name>"),
    })).sort((a, b) => a.reason.localeCompare(b.reason)),
  };
}

/**
 * The PV as JSON once its finalizers have settled: upstream takes its
 * protection finalizer off a Retain PV moments after binding (the delete
 * path's handleProtectionFinalizer); wait for that, or 10 s, before comparing.
 */
async function settledVolume(cluster: RunningCluster, name: string): Promise<string> {
  const read = () => cluster.kubectl(["get", "pv", name, "-o", "json"]);
  const first = JSON.parse(await read());
  if (first.spec?.persistentVolumeReclaimPolicy !== "Retain") return JSON.stringify(first);
  return await waitFor(async () => {
    const text = await read();
    return JSON.parse(text).metadata?.finalizers?.includes(PV_PROTECTION_FINALIZER)
      ? undefined
      : text;
  }, { description: `PV ${name} without ${PV_PROTECTION_FINALIZER}`, timeoutMs: 10_000 }).catch(
    read,
  );
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

/**
 * The PV with what must differ between two provisionings replaced by a
 * placeholder, only where present (so that presence is still compared).
 * The PV name (pvc-<claim uid>) was replaced already, wherever it appears.
 */
export function normalizeVolume(pv: unknown): unknown {
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
  // The hostpath driver's volume ID is a fresh UUID per volume.
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

/** Every difference between what the two agents produced for one claim, or nothing. */
export function compare(ours: Provisioned, upstream: Provisioned): Promise<void> {
  const names = { expectedName: "upstream", actualName: "ours" };
  const differences = [
    describeDifference(withoutNodeLabels(ours.pv), upstream.pv, { what: "the PVs", ...names }),
    describeDifference(ours.request, upstream.request, {
      what: "the CreateVolume requests",
      ...names,
    }),
    describeDifference(withoutLocations(ours.events), upstream.events, {
      what: "the claim's Events",
      ...names,
    }),
  ].filter((difference) => difference !== "");
  if (!isDeepStrictEqual(ours.secrets, upstream.secrets)) {
    // The keys only: secret values never reach a log.
    const keys = (secrets: Record<string, string> | undefined) =>
      JSON.stringify(Object.keys(secrets ?? {}).sort());
    differences.push(
      `the provisioner secrets of the CreateVolume requests differ (values not shown): ` +
        `ours has keys ${keys(ours.secrets)}, upstream ${keys(upstream.secrets)}`,
    );
  }
  if (differences.length > 0) return Promise.reject(new Error(differences.join("\n\n")));
  return Promise.resolve();
}

/**
 * Our PV without the labels this agent puts on a PV confined to its node
 * (lib/model/labels.ts nodeLabels, which upstream does not write), after
 * checking that it has exactly those: its PV watch selects them.
 */
function withoutNodeLabels(pv: unknown): unknown {
  if (pv === null) return pv;
  const copy = structuredClone(pv) as {
    metadata: { labels?: Record<string, string> };
    spec: { csi?: { driver?: string } };
  };
  const driver = copy.spec.csi?.driver ?? "";
  assert.deepEqual(copy.metadata.labels, nodeLabels(driver, "node-a"), "ours' PV labels");
  delete copy.metadata.labels;
  return copy;
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

/** Deletes the claims and waits until they are gone, so that new ones can take their names. */
export async function deleteClaims(cluster: RunningCluster, names: string[]): Promise<void> {
  const { core } = cluster.admin;
  for (const name of names) {
    await core.deleteNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name });
  }
  await waitFor(async () => {
    const list = await core.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE });
    return !list.items.some((claim) => names.includes(claim.metadata!.name!));
  }, { description: `the claims ${names} deleted` });
}
