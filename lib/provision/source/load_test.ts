import { deepStrictEqual } from "node:assert/strict";
import type { Claim, PersistentVolume } from "../../model/objects.ts";
import type { ClaimSource } from "./classify.ts";
import { readClaimSourceFacts, readSourceFacts, SNAPSHOT_API_NOT_SERVED } from "./load.ts";
import { FakeDataSources } from "../../../tests/fakes/data_sources.ts";
import {
  claim,
  snapshotContent,
  sourceClaim,
  sourceVolume,
  volumeSnapshot,
} from "../../../tests/builders/provision.ts";

const CLONE: ClaimSource = {
  kind: "clone",
  namespace: "apps",
  name: "origin",
  field: "spec.dataSource",
};
const RESTORE: ClaimSource = { ...CLONE, kind: "snapshot", name: "snap" };

/** The reads: the fake API, claims the API server has, and this node's PVs. */
function reads(
  options: { claims?: Claim[]; local?: PersistentVolume[]; api?: FakeDataSources } = {},
) {
  const api = options.api ?? new FakeDataSources();
  const claims = new Map((options.claims ?? []).map((c) => [c.metadata.name, c]));
  const local = new Map((options.local ?? []).map((pv) => [pv.metadata.name, pv]));
  const readClaims: string[] = [];
  return {
    api,
    readClaims,
    reads: {
      api,
      claims: {
        readClaim: (key: { namespace: string; name: string }) => {
          readClaims.push(key.name);
          return Promise.resolve(claims.get(key.name));
        },
      },
      volumes: { get: (name: string) => local.get(name), list: () => [...local.values()] },
    },
  };
}

Deno.test("readSourceFacts() reads a clone's claim, and its PV from this node's cache first", async () => {
  const here = reads({ claims: [sourceClaim()], local: [sourceVolume()] });
  deepStrictEqual(await readSourceFacts(CLONE, here.reads), {
    kind: "clone",
    claim: { ok: true, value: sourceClaim() },
    volume: { ok: true, value: sourceVolume() },
  });
  deepStrictEqual(here.api.reads, 0);
  const elsewhere = reads({ claims: [sourceClaim()] });
  elsewhere.api.volumes.set("pv-origin", sourceVolume({ node: "node-b" }));
  const facts = await readSourceFacts(CLONE, elsewhere.reads);
  deepStrictEqual(facts.kind === "clone" && facts.volume, {
    ok: true,
    value: sourceVolume({ node: "node-b" }),
  });
});

Deno.test("readSourceFacts() stops at what is missing, with the API's wording", async () => {
  deepStrictEqual(await readSourceFacts(CLONE, reads().reads), {
    kind: "clone",
    claim: { ok: false, error: 'persistentvolumeclaim "origin" not found' },
  });
  const unbound = sourceClaim({ spec: { volumeName: "" } });
  deepStrictEqual(await readSourceFacts(CLONE, reads({ claims: [unbound] }).reads), {
    kind: "clone",
    claim: { ok: true, value: unbound },
  });
  deepStrictEqual(await readSourceFacts(CLONE, reads({ claims: [sourceClaim()] }).reads), {
    kind: "clone",
    claim: { ok: true, value: sourceClaim() },
    volume: { ok: false, error: 'persistentvolumes "pv-origin" not found' },
  });
  deepStrictEqual(await readSourceFacts(RESTORE, reads().reads), {
    kind: "snapshot",
    snapshot: { ok: false, error: 'volumesnapshots.snapshot.storage.k8s.io "snap" not found' },
  });
});

Deno.test("readSourceFacts() says what to install when VolumeSnapshots are not served", async () => {
  const world = reads();
  world.api.served = false;
  world.api.snapshots.set("apps/snap", volumeSnapshot());
  deepStrictEqual(await readSourceFacts(RESTORE, world.reads), {
    kind: "snapshot",
    snapshot: { ok: false, error: SNAPSHOT_API_NOT_SERVED },
  });
  deepStrictEqual(world.api.reads, 0);
});

Deno.test("readSourceFacts() finds a snapshot's source volume on this node without asking the API", async () => {
  const world = reads({ local: [sourceVolume()] });
  world.api.snapshots.set("apps/snap", volumeSnapshot());
  world.api.contents.set("snapcontent-1", snapshotContent());
  deepStrictEqual(await readSourceFacts(RESTORE, world.reads), {
    kind: "snapshot",
    snapshot: { ok: true, value: volumeSnapshot() },
    content: { ok: true, value: snapshotContent() },
    sourceVolume: { ok: true, value: sourceVolume() },
  });
  deepStrictEqual(world.readClaims, []);
});

Deno.test("readSourceFacts() finds a snapshot's source volume on another node through the claim it was taken of", async () => {
  const world = reads({ claims: [sourceClaim()] });
  world.api.snapshots.set("apps/snap", volumeSnapshot());
  world.api.contents.set("snapcontent-1", snapshotContent());
  world.api.volumes.set("pv-origin", sourceVolume({ node: "node-b" }));
  const facts = await readSourceFacts(RESTORE, world.reads);
  deepStrictEqual(facts.kind === "snapshot" && facts.sourceVolume, {
    ok: true,
    value: sourceVolume({ node: "node-b" }),
  });
});

Deno.test("readSourceFacts() does not know where a pre-provisioned snapshot, or one of a gone volume, is", async () => {
  const preProvisioned = reads();
  preProvisioned.api.snapshots.set("apps/snap", volumeSnapshot());
  preProvisioned.api.contents.set(
    "snapcontent-1",
    snapshotContent({ spec: { source: { snapshotHandle: "imported" } } }),
  );
  const imported = await readSourceFacts(RESTORE, preProvisioned.reads);
  deepStrictEqual(imported.kind === "snapshot" && imported.sourceVolume, {
    ok: false,
    reason: 'VolumeSnapshotContent "snapcontent-1" is pre-provisioned: it names no source volume',
  });
  // The claim it was taken of now has another volume.
  const replaced = reads({ claims: [sourceClaim()] });
  replaced.api.snapshots.set("apps/snap", volumeSnapshot());
  replaced.api.contents.set("snapcontent-1", snapshotContent());
  replaced.api.volumes.set(
    "pv-origin",
    sourceVolume({ spec: { csi: { driver: "hostpath.csi.k8s.io", volumeHandle: "newer" } } }),
  );
  const gone = await readSourceFacts(RESTORE, replaced.reads);
  deepStrictEqual(gone.kind === "snapshot" && !gone.sourceVolume?.ok, true);
});

Deno.test("readClaimSourceFacts() reads a claim's snapshot or clone source, and nothing for other claims", async () => {
  const world = reads({ claims: [sourceClaim()], local: [sourceVolume()] });
  const options = { crossNamespaceVolumeDataSource: false };
  const clone = claim({
    spec: { dataSourceRef: { kind: "PersistentVolumeClaim", name: "origin" } },
  });
  deepStrictEqual(await readClaimSourceFacts(clone, world.reads, options), {
    kind: "clone",
    claim: { ok: true, value: sourceClaim() },
    volume: { ok: true, value: sourceVolume() },
  });
  const others = [
    claim(),
    claim({ spec: { dataSource: { apiGroup: "example.com", kind: "Populator", name: "p" } } }),
    claim({ spec: { dataSource: { apiGroup: "example.com", kind: "VolumeSnapshot", name: "s" } } }),
  ];
  for (const other of others) {
    deepStrictEqual(await readClaimSourceFacts(other, world.reads, options), undefined);
  }
  deepStrictEqual(world.readClaims, ["origin"]);
});
