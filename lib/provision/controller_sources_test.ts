/**
 * The controller around restores and clones, with the in-memory fakes of
 * tests/fakes/provision_world.ts: the source protection finalizers around
 * CreateVolume, sources on another node sent back with a Warning, and
 * answers that name no content source.
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import { CsiError } from "../csi/status.ts";
import type { CreateVolumeRequest, CreateVolumeResponse } from "../csi/types.ts";
import type { Claim } from "../model/objects.ts";
import {
  CLONE_PROTECTION_FINALIZER as CLONE_FINALIZER,
  SNAPSHOT_SOURCE_PROTECTION_FINALIZER as SNAPSHOT_FINALIZER,
} from "../model/keys.ts";
import type { ProvisionOptions } from "./request/request.ts";
import {
  claim as buildClaim,
  NODE,
  SNAPSHOT_HANDLE,
  snapshotContent,
  SOURCE_HANDLE,
  sourceClaim,
  sourceVolume,
  TOPOLOGY_KEY,
  volumeSnapshot,
} from "../../tests/builders/provision.ts";
import { FakeDataSources } from "../../tests/fakes/data_sources.ts";
import {
  type CreateAnswer,
  PV_NAME,
  reasons,
  volumeOf,
  world,
} from "../../tests/fakes/provision_world.ts";

const RESTORE_SPEC = {
  dataSource: { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: "snap" },
};
const CAN_RESTORE_AND_CLONE = {
  controllerService: true,
  controller: ["CREATE_DELETE_VOLUME", "CREATE_DELETE_SNAPSHOT", "CLONE_VOLUME"],
} satisfies ProvisionOptions["capabilities"];

/** A world whose driver can restore and clone, with the snapshot "snap" of "origin". */
function sourceWorld(
  options: {
    claim: Claim;
    sourceNode?: string;
    answers?: CreateAnswer[];
    respond?: (request: CreateVolumeRequest) => CreateVolumeResponse;
  },
) {
  const sources = new FakeDataSources();
  sources.snapshots.set("apps/snap", volumeSnapshot());
  sources.contents.set("snapcontent-1", snapshotContent());
  const w = world({
    claims: [options.claim, sourceClaim()],
    sources,
    prepare: { capabilities: CAN_RESTORE_AND_CLONE },
    ...(options.answers ? { answers: options.answers } : {}),
    ...(options.respond ? { respond: options.respond } : {}),
  });
  const source = sourceVolume({ node: options.sourceNode ?? NODE });
  if (options.sourceNode === undefined) w.volumes.set(source.metadata.name, source);
  else sources.volumes.set(source.metadata.name, source);
  sources.observe = () => `CreateVolume calls: ${w.record.created.length}`;
  return { ...w, sources };
}

Deno.test("a restore: the snapshot's finalizer is added before CreateVolume and removed after the PV", async () => {
  const w = sourceWorld({ claim: buildClaim({ spec: RESTORE_SPEC }) });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created[0]?.volume_content_source, {
    snapshot: { snapshot_id: SNAPSHOT_HANDLE },
  });
  deepStrictEqual(w.sources.finalizerChanges, [
    `add ${SNAPSHOT_FINALIZER} apps/snap (CreateVolume calls: 0)`,
    `remove ${SNAPSHOT_FINALIZER} apps/snap (CreateVolume calls: 1)`,
  ]);
  deepStrictEqual(w.record.savedPvs.length, 1);
  w.close();
});

Deno.test("a clone: the source claim's finalizer is added before CreateVolume and left to the cloning-protection controller", async () => {
  const w = sourceWorld({
    claim: buildClaim({ spec: { dataSource: { kind: "PersistentVolumeClaim", name: "origin" } } }),
  });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created[0]?.volume_content_source, {
    volume: { volume_id: SOURCE_HANDLE },
  });
  deepStrictEqual(w.sources.finalizerChanges, [
    `add ${CLONE_FINALIZER} apps/origin (CreateVolume calls: 0)`,
  ]);
  w.close();
});

Deno.test("a restore whose source is on another node: no CreateVolume, a Warning, back to the scheduler; again without reads", async () => {
  const w = sourceWorld({ claim: buildClaim({ spec: RESTORE_SPEC }), sourceNode: "node-b" });
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created, []);
  deepStrictEqual(w.record.selectedNodeRemoved, ["data"]);
  deepStrictEqual(reasons(w.record.events), ["Normal Provisioning", "Warning ProvisioningFailed"]);
  ok(w.record.events[1]?.message.includes(`the node with ${TOPOLOGY_KEY}=node-b`));
  deepStrictEqual(w.sources.finalizerChanges, []);
  const reads = w.sources.reads;
  // Selected to this node again within the slow retry: sent back at once.
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.sources.reads, reads);
  deepStrictEqual(w.record.created, []);
  deepStrictEqual(w.record.selectedNodeRemoved, ["data", "data"]);
  deepStrictEqual(w.record.events.at(-1)?.message, w.record.events[1]?.message);
  w.close();
});

Deno.test("a restore of unknown place: CreateVolume's NotFound is explained and the claim sent back", async () => {
  const w = sourceWorld({
    claim: buildClaim({ spec: RESTORE_SPEC }),
    answers: [new CsiError("CreateVolume", 5, "no such snapshot")],
  });
  w.sources.contents.set(
    "snapcontent-1",
    snapshotContent({ spec: { source: { snapshotHandle: SNAPSHOT_HANDLE } } }),
  );
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created.length, 1);
  deepStrictEqual(w.record.selectedNodeRemoved, ["data"]);
  const warning = w.record.events.at(-1)?.message ?? "";
  ok(warning.includes("which node does is not known"), warning);
  ok(warning.includes('VolumeSnapshotContent "snapcontent-1" is pre-provisioned'), warning);
  deepStrictEqual(await w.sync(), { kind: "done" });
  deepStrictEqual(w.record.created.length, 1, "no second CreateVolume within the slow retry");
  w.close();
});

Deno.test("a restore whose answer names no content source is deleted again and retried", async () => {
  const w = sourceWorld({
    claim: buildClaim({ spec: RESTORE_SPEC }),
    respond: (request) => ({ volume: { ...volumeOf(request).volume!, content_source: null } }),
  });
  deepStrictEqual(await w.sync(), { kind: "retry" });
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  deepStrictEqual(w.record.events.at(-1)?.message, "volume content source missing");
  deepStrictEqual(w.record.savedPvs, []);
  w.close();
});

Deno.test("a snapshot that cannot be protected: without RBAC restored anyway, gone is a retry", async () => {
  const forbidden = sourceWorld({ claim: buildClaim({ spec: RESTORE_SPEC }) });
  forbidden.sources.snapshotWrite = "forbidden";
  deepStrictEqual(await forbidden.sync(), { kind: "done" });
  deepStrictEqual(forbidden.record.created.length, 1);
  forbidden.close();
  const gone = sourceWorld({ claim: buildClaim({ spec: RESTORE_SPEC }) });
  gone.sources.snapshotWrite = "gone";
  deepStrictEqual(await gone.sync(), { kind: "retry" });
  deepStrictEqual(gone.record.created, []);
  deepStrictEqual(
    gone.record.events.at(-1)?.message,
    `error adding finalizer ${SNAPSHOT_FINALIZER} to VolumeSnapshot "apps/snap": ` +
      'volumesnapshots.snapshot.storage.k8s.io "snap" not found',
  );
  gone.close();
});
