/**
 * What differential_democratic_test.ts collects beside the PVs, requests and
 * Events of differential_support.ts: how each claim's deletion ended (its
 * PV, the DeleteVolume requests the driver got, its volume left or not) and
 * the CSIStorageCapacity objects an agent published, with the GetCapacity
 * requests behind them, normalized where two agents must differ.
 */
import type { V1CSIStorageCapacity } from "@kubernetes/client-node";
import type { GetCapacityRequest } from "../../lib/csi/types.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { bytesOf } from "./capacity_support.ts";
import { NAMESPACE } from "./differential_inputs.ts";
import { canonicalJson } from "./object_diff.ts";

/** How a claim's deletion ended, the volume name replaced by `<pv name>`. */
export interface Deleted {
  /** "deleted", or the phase the PV stays in (a Retain PV: Released). */
  pv: string;
  /** The distinct DeleteVolume requests. */
  deleteVolumeRequests: unknown[];
  /** How many DeleteVolume calls the driver got for the volume. */
  deleteVolumeCalls: number;
  volumeLeft: boolean;
}

/** The distinct values, in the order of their canonical JSON. */
export function distinct(values: readonly unknown[]): unknown[] {
  const byJson = new Map(values.map((value) => [canonicalJson(value), value]));
  return [...byJson.keys()].sort().map((key) => byJson.get(key));
}

/**
 * Deletes the claims, waits until each PV is deleted or Released, and says
 * how each ended. `pvNames`: the claims' PVs, by claim name.
 */
export async function deleteAndCollect(
  cluster: RunningCluster,
  pvNames: Map<string, string>,
): Promise<Map<string, Deleted>> {
  const { core } = cluster.admin;
  for (const name of pvNames.keys()) {
    await core.deleteNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name });
  }
  const phases = await waitFor(async () => {
    const pvs = new Map(
      (await core.listPersistentVolume()).items.map((pv) => [pv.metadata!.name!, pv]),
    );
    const ended = [...pvNames.values()].map((name) => {
      const pv = pvs.get(name);
      if (pv === undefined) return "deleted";
      // A Delete PV is Released for a moment before its provisioner deletes it.
      const retained = pv.spec?.persistentVolumeReclaimPolicy === "Retain";
      return retained ? pv.status?.phase ?? "" : "not yet deleted";
    });
    return ended.every((phase) => phase === "deleted" || phase === "Released") && ended;
  }, { description: "the claims' PVs deleted, or Released if retained", timeoutMs: 60_000 });
  const node = cluster.node("node-a");
  const calls = await node.calls("DeleteVolume");
  const volumes = new Set((await node.volumes()).map((volume) => volume.name));
  const outcomes = new Map<string, Deleted>();
  [...pvNames].forEach(([claim, pv], index) => {
    const requests = calls.filter((call) =>
      (call.request as { volume_id?: string }).volume_id === pv
    )
      .map((call) => JSON.parse(JSON.stringify(call.request).replaceAll(pv, "<pv name>")));
    outcomes.set(claim, {
      pv: phases[index]!,
      deleteVolumeRequests: distinct(requests),
      deleteVolumeCalls: requests.length,
      volumeLeft: volumes.has(pv),
    });
  });
  return outcomes;
}

/** Removes what a Retain PV keeps: the PV object, and its volume straight at the driver. */
export async function removeRetained(cluster: RunningCluster, pvName: string): Promise<void> {
  await cluster.admin.core.deletePersistentVolume({ name: pvName });
  await cluster.node("node-a").callDriver("Controller", "DeleteVolume", { volume_id: pvName });
}

/**
 * How far a published capacity may be from the driver's answer a moment
 * later: democratic-csi answers the free space of a filesystem every
 * process of the test writes its logs to.
 */
const CAPACITY_SLACK = 256n * 1024n * 1024n;

/** The driver's GetCapacity answer now, in bytes. */
export async function driverFreeSpace(cluster: RunningCluster): Promise<bigint> {
  const answer = await cluster.node("node-a").callDriver("Controller", "GetCapacity", {}) as {
    available_capacity?: string | number;
  };
  return BigInt(answer.available_capacity ?? 0);
}

/**
 * The agent's CSIStorageCapacity objects, one per class, once there is one
 * for each of `classes`: by class, with what the API server sets replaced,
 * and a capacity within CAPACITY_SLACK of `freeSpace` replaced by
 * `<free space>` (any other value, 0 included, is kept as published).
 */
export async function publishedCapacities(
  cluster: RunningCluster,
  classes: string[],
  freeSpace: bigint,
): Promise<Record<string, unknown>> {
  const objects = await waitFor(async () => {
    const list = await cluster.admin.storage.listNamespacedCSIStorageCapacity({
      namespace: cluster.agentNamespace,
    });
    const found = list.items.filter((item) => classes.includes(item.storageClassName));
    const published = new Set(found.map((item) => item.storageClassName));
    return classes.every((name) => published.has(name)) && found;
  }, { description: `CSIStorageCapacity objects for ${classes}`, timeoutMs: 60_000 });
  const byClass: Record<string, unknown[]> = {};
  for (const object of objects) {
    (byClass[object.storageClassName] ??= []).push(normalizeCapacity(object, freeSpace));
  }
  return byClass;
}

function normalizeCapacity(object: V1CSIStorageCapacity, freeSpace: bigint): unknown {
  const copy = JSON.parse(JSON.stringify(object));
  for (const key of ["name", "uid", "resourceVersion", "creationTimestamp", "managedFields"]) {
    if (Object.hasOwn(copy.metadata, key)) copy.metadata[key] = `<${key}>`;
  }
  const difference = bytesOf(object.capacity) - freeSpace;
  if (difference <= CAPACITY_SLACK && -difference <= CAPACITY_SLACK) {
    copy.capacity = "<free space>";
  }
  return copy;
}

/** The GetCapacity requests the driver got after its first `from` calls. */
export async function getCapacityRequests(
  cluster: RunningCluster,
  from: number,
): Promise<GetCapacityRequest[]> {
  const calls = (await cluster.node("node-a").calls("GetCapacity")).slice(from);
  return calls.map((call) => call.request as GetCapacityRequest);
}

/** Deletes the agents' CSIStorageCapacity objects, so that the next agent publishes its own. */
export async function deleteCapacities(cluster: RunningCluster): Promise<void> {
  const namespace = cluster.agentNamespace;
  await cluster.admin.storage.deleteCollectionNamespacedCSIStorageCapacity({ namespace });
  await waitFor(async () => {
    const list = await cluster.admin.storage.listNamespacedCSIStorageCapacity({ namespace });
    return list.items.length === 0;
  }, { description: "the CSIStorageCapacity objects deleted" });
}
