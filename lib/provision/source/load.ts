/**
 * Reads what the checks of a claim's data source need (checks.ts),
 * in the order upstream reads it, and no further than a failed read: for a
 * clone the source claim and its PV, for a restore the VolumeSnapshot, its
 * content, and the PV of the volume the snapshot was taken of (to tell where
 * the snapshot lives). A read that fails becomes the error text the checks
 * report; nothing here throws.
 */
import type {
  Claim,
  PersistentVolume,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from "../../model/objects.ts";
import type { CloneFacts, Read, SnapshotFacts, SourceFacts, SourceVolume } from "./checks.ts";
import { type ClaimSource, classifyDataSource } from "./classify.ts";
import type { DataSourceApi, ListedLookup, ProvisionApi } from "../ports.ts";

/** What the loader reads through (reads only: `explain` passes its own). */
export interface SourceReads {
  api: Pick<
    DataSourceApi,
    "snapshotsServed" | "readVolumeSnapshot" | "readVolumeSnapshotContent" | "readPersistentVolume"
  >;
  /** Claims, read from the API server (the claim cache holds only unbound claims). */
  claims: Pick<ProvisionApi, "readClaim">;
  /** This node's PVs. */
  volumes: ListedLookup<PersistentVolume>;
}

/** Message of a missing VolumeSnapshot API, in place of the API server's 404. */
export const SNAPSHOT_API_NOT_SERVED =
  "the VolumeSnapshot API (snapshot.storage.k8s.io/v1) is not served by this cluster: install " +
  "external-snapshotter's CRDs and snapshot-controller; the claim is retried, no restart of " +
  "csi-node-provisioner is needed";

/**
 * The facts about a claim's snapshot or clone source; undefined for a claim
 * without one (or whose data source upstream's classification refuses, or
 * leaves to a populator). The provision attempt reads them before its
 * checks, and the Immediate ownership race can read them to ask
 * holder.ts whether this node holds the source.
 */
export async function readClaimSourceFacts(
  claim: Claim,
  reads: SourceReads,
  options: { crossNamespaceVolumeDataSource: boolean; signal?: AbortSignal },
): Promise<SourceFacts | undefined> {
  const classified = classifyDataSource(claim, options);
  if (classified.kind !== "source") return undefined;
  return await readSourceFacts(classified.source, reads, options.signal);
}

/** Reads the facts about the claim's source. */
export function readSourceFacts(
  source: ClaimSource,
  reads: SourceReads,
  signal?: AbortSignal,
): Promise<SourceFacts> {
  return source.kind === "clone"
    ? readCloneFacts(source, reads, signal)
    : readSnapshotFacts(source, reads, signal);
}

async function attempt<T>(
  read: () => Promise<T | undefined>,
  notFound: string,
): Promise<Read<T>> {
  try {
    const value = await read();
    return value === undefined ? { ok: false, error: notFound } : { ok: true, value };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** A PV: from this node's cache, else from the API server. */
function readVolume(name: string, reads: SourceReads, signal?: AbortSignal) {
  const cached = reads.volumes.get(name);
  if (cached !== undefined) {
    return Promise.resolve<Read<PersistentVolume>>({ ok: true, value: cached });
  }
  return attempt(
    () => reads.api.readPersistentVolume(name, signal),
    `persistentvolumes ${JSON.stringify(name)} not found`,
  );
}

async function readCloneFacts(
  source: ClaimSource,
  reads: SourceReads,
  signal?: AbortSignal,
): Promise<CloneFacts> {
  const claim: Read<Claim> = await attempt(
    () => reads.claims.readClaim({ namespace: source.namespace, name: source.name }, signal),
    // Upstream reads it from its claim lister, whose error says it this way.
    `persistentvolumeclaim ${JSON.stringify(source.name)} not found`,
  );
  const volumeName = claim.ok ? claim.value.spec.volumeName ?? "" : "";
  if (volumeName === "") return { kind: "clone", claim };
  return { kind: "clone", claim, volume: await readVolume(volumeName, reads, signal) };
}

async function readSnapshotFacts(
  source: ClaimSource,
  reads: SourceReads,
  signal?: AbortSignal,
): Promise<SnapshotFacts> {
  if (!(await servedOrUnknown(reads))) {
    return { kind: "snapshot", snapshot: { ok: false, error: SNAPSHOT_API_NOT_SERVED } };
  }
  const snapshot: Read<VolumeSnapshot> = await attempt(
    () => reads.api.readVolumeSnapshot({ namespace: source.namespace, name: source.name }, signal),
    `volumesnapshots.snapshot.storage.k8s.io ${JSON.stringify(source.name)} not found`,
  );
  const contentName = snapshot.ok ? snapshot.value.status?.boundVolumeSnapshotContentName : "";
  if (!snapshot.ok || contentName === undefined || contentName === "") {
    return { kind: "snapshot", snapshot };
  }
  const content: Read<VolumeSnapshotContent> = await attempt(
    () => reads.api.readVolumeSnapshotContent(contentName, signal),
    `volumesnapshotcontents.snapshot.storage.k8s.io ${JSON.stringify(contentName)} not found`,
  );
  if (!content.ok) return { kind: "snapshot", snapshot, content };
  const sourceVolume = await snapshotSourceVolume(snapshot.value, content.value, reads, signal);
  return { kind: "snapshot", snapshot, content, sourceVolume };
}

/** A discovery failure is not a verdict: read the snapshot and let its answer tell. */
async function servedOrUnknown(reads: SourceReads): Promise<boolean> {
  try {
    return await reads.api.snapshotsServed();
  } catch {
    return true;
  }
}

/**
 * The PV of the volume a snapshot was taken of: the content's source volume
 * handle, found among this node's PVs, else through the claim the snapshot
 * names (when that claim still has that volume).
 */
async function snapshotSourceVolume(
  snapshot: VolumeSnapshot,
  content: VolumeSnapshotContent,
  reads: SourceReads,
  signal?: AbortSignal,
): Promise<SourceVolume> {
  const handle = content.spec.source.volumeHandle;
  if (handle === undefined) {
    return {
      ok: false,
      reason:
        `VolumeSnapshotContent ${JSON.stringify(content.metadata.name)} is pre-provisioned: ` +
        "it names no source volume",
    };
  }
  const isSource = (pv: PersistentVolume) =>
    pv.spec.csi?.driver === content.spec.driver && pv.spec.csi.volumeHandle === handle;
  const local = reads.volumes.list().find(isSource);
  if (local !== undefined) return { ok: true, value: local };
  const gone = {
    ok: false as const,
    reason: `the volume it was taken of (${handle}) is no longer a PersistentVolume of the claim ` +
      `it was taken of`,
  };
  const claimName = snapshot.spec.source.persistentVolumeClaimName;
  if (claimName === undefined) return gone;
  try {
    const claim = await reads.claims.readClaim(
      { namespace: snapshot.metadata.namespace, name: claimName },
      signal,
    );
    const volumeName = claim?.spec.volumeName ?? "";
    if (volumeName === "") return gone;
    const volume = await readVolume(volumeName, reads, signal);
    return volume.ok && isSource(volume.value) ? volume : gone;
  } catch (error) {
    return {
      ok: false,
      reason: `its source volume could not be read: ${(error as Error).message}`,
    };
  }
}
