/**
 * The finalizers that keep a data source from being deleted while a volume
 * is made from it (external-provisioner pkg/controller/controller.go,
 * `setCloneFinalizer`, `setSnapshotFinalizer`, `removeSnapshotFinalizer`):
 * added just before CreateVolume; the snapshot's is removed once the PV is
 * saved, the claim's by the cloning-protection controller (lib/clone) once no
 * clone of it is Pending.
 */
import type { Logger } from "../../log/logger.ts";
import {
  CLONE_PROTECTION_FINALIZER,
  SNAPSHOT_SOURCE_PROTECTION_FINALIZER,
} from "../../model/keys.ts";
import type { VolumeSnapshot } from "../../model/objects.ts";
import type { ClaimSource } from "./classify.ts";
import { type Problem, problem } from "../outcome.ts";
import type { DataSourceApi } from "../ports.ts";

interface ProtectionContext {
  api: Pick<DataSourceApi, "changeClaimFinalizer" | "changeSnapshotFinalizer">;
  logger: Logger;
  signal: AbortSignal;
}

function describe(source: ClaimSource): string {
  const kind = source.kind === "snapshot" ? "VolumeSnapshot" : "PersistentVolumeClaim";
  return `${kind} ${JSON.stringify(`${source.namespace}/${source.name}`)}`;
}

/** Adds the source's protection finalizer; a problem (retry, nothing created) when it cannot. */
export async function protectSource(
  source: ClaimSource,
  context: ProtectionContext & { snapshot?: VolumeSnapshot | undefined },
): Promise<Problem | undefined> {
  const ref = { namespace: source.namespace, name: source.name };
  const finalizer = source.kind === "clone"
    ? CLONE_PROTECTION_FINALIZER
    : SNAPSHOT_SOURCE_PROTECTION_FINALIZER;
  const failed = (reason: string) =>
    problem(`error adding finalizer ${finalizer} to ${describe(source)}: ${reason}`, {
      state: "noChange",
    });
  try {
    if (source.kind === "clone") {
      const result = await context.api.changeClaimFinalizer(
        ref,
        { finalizer, action: "add" },
        context.signal,
      );
      return result === "gone"
        ? failed(`persistentvolumeclaims ${JSON.stringify(source.name)} not found`)
        : undefined;
    }
    const current = context.snapshot === undefined ? {} : { current: context.snapshot };
    const result = await context.api.changeSnapshotFinalizer(
      ref,
      { finalizer, action: "add", ...current },
      context.signal,
    );
    switch (result) {
      case "gone":
        return failed(
          `volumesnapshots.snapshot.storage.k8s.io ${JSON.stringify(source.name)} not found`,
        );
      case "conflict":
        return failed("the VolumeSnapshot kept changing");
      case "forbidden":
        // As upstream: without the RBAC to update VolumeSnapshots, restore unprotected.
        context.logger.info(
          { snapshot: `${source.namespace}/${source.name}` },
          "Cannot add the snapshot source-protection finalizer (no RBAC to patch or update volumesnapshots): restoring without it",
        );
        return undefined;
      default:
        return undefined;
    }
  } catch (error) {
    return failed((error as Error).message);
  }
}

/**
 * Removes the snapshot's protection finalizer after the restore. A failure
 * is only logged: the orphan sweep (lib/clone) removes it later.
 */
export async function releaseSnapshot(
  source: ClaimSource,
  context: ProtectionContext,
): Promise<void> {
  const snapshot = `${source.namespace}/${source.name}`;
  try {
    const result = await context.api.changeSnapshotFinalizer(
      { namespace: source.namespace, name: source.name },
      { finalizer: SNAPSHOT_SOURCE_PROTECTION_FINALIZER, action: "remove" },
      context.signal,
    );
    if (result === "conflict" || result === "forbidden") {
      context.logger.warn(
        { snapshot, result },
        "Failed to remove the snapshot source-protection finalizer; the orphan sweep will",
      );
    }
  } catch (error) {
    context.logger.warn(
      { snapshot, err: error },
      "Failed to remove the snapshot source-protection finalizer; the orphan sweep will",
    );
  }
}
