/**
 * An in-memory DataSourceApi for unit tests of provisioning: snapshots,
 * contents and PVs of other nodes by name, whether the VolumeSnapshot API
 * is served, and every finalizer change it was asked for.
 */
import type {
  PersistentVolume,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from "../../lib/model/objects.ts";
import type { DataSourceApi, SnapshotFinalizerWrite } from "../../lib/provision/ports.ts";

export class FakeDataSources implements DataSourceApi {
  served = true;
  /** Snapshots by "namespace/name". */
  readonly snapshots = new Map<string, VolumeSnapshot>();
  readonly contents = new Map<string, VolumeSnapshotContent>();
  /** PVs the API server has (beyond this node's cache). */
  readonly volumes = new Map<string, PersistentVolume>();
  /** e.g. `add provisioner.storage.kubernetes.io/cloning-protection apps/origin`. */
  readonly finalizerChanges: string[] = [];
  /** The answer of the next snapshot finalizer writes. */
  snapshotWrite: SnapshotFinalizerWrite | undefined;
  /** How many reads were made. */
  reads = 0;
  /** Appended to each recorded finalizer change, e.g. what the driver got so far. */
  observe: () => string = () => "";

  snapshotsServed(): Promise<boolean> {
    return Promise.resolve(this.served);
  }

  readVolumeSnapshot(
    ref: { namespace: string; name: string },
  ): Promise<VolumeSnapshot | undefined> {
    this.reads++;
    return Promise.resolve(this.snapshots.get(`${ref.namespace}/${ref.name}`));
  }

  readVolumeSnapshotContent(name: string): Promise<VolumeSnapshotContent | undefined> {
    this.reads++;
    return Promise.resolve(this.contents.get(name));
  }

  readPersistentVolume(name: string): Promise<PersistentVolume | undefined> {
    this.reads++;
    return Promise.resolve(this.volumes.get(name));
  }

  changeClaimFinalizer(
    ref: { namespace: string; name: string },
    change: { finalizer: string; action: "add" | "remove" },
  ): Promise<"patched" | "gone"> {
    this.#record(ref, change);
    return Promise.resolve("patched");
  }

  changeSnapshotFinalizer(
    ref: { namespace: string; name: string },
    change: { finalizer: string; action: "add" | "remove" },
  ): Promise<SnapshotFinalizerWrite> {
    this.#record(ref, change);
    const snapshot = this.snapshots.get(`${ref.namespace}/${ref.name}`);
    if (this.snapshotWrite !== undefined) return Promise.resolve(this.snapshotWrite);
    if (snapshot === undefined) return Promise.resolve("gone");
    const finalizers = (snapshot.metadata.finalizers ?? []).filter((f) => f !== change.finalizer);
    if (change.action === "add") finalizers.push(change.finalizer);
    snapshot.metadata.finalizers = finalizers;
    return Promise.resolve("changed");
  }

  #record(
    ref: { namespace: string; name: string },
    change: { finalizer: string; action: "add" | "remove" },
  ): void {
    const seen = this.observe();
    this.finalizerChanges.push(
      `${change.action} ${change.finalizer} ${ref.namespace}/${ref.name}${
        seen ? ` (${seen})` : ""
      }`,
    );
  }
}
