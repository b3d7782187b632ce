/**
 * VolumeSnapshots and VolumeSnapshotContents (snapshot.storage.k8s.io/v1):
 * whether the API server serves them at all (the CRDs are optional), the
 * reads a restore checks, and the source-protection finalizer. Finalizers of
 * a custom resource cannot be merged by a strategic merge patch, so they are
 * written as the whole list with a JSON merge patch that carries the
 * resourceVersion read just before (a 409 means someone else wrote in
 * between: read again and retry).
 */
import type { Logger } from "../log/logger.ts";
import { SNAPSHOT_API_GROUP } from "../model/keys.ts";
import type { Metadata, VolumeSnapshot, VolumeSnapshotContent } from "../model/objects.ts";
import { Informer, type RawObject } from "./informer/informer.ts";
import { finalizersAfter, patchOrUpdate, PatchPermissions } from "./patch_or_update.ts";
import { hasStatus, type KubeRest } from "./rest/client.ts";

const GROUP_VERSION = `${SNAPSHOT_API_GROUP}/v1`;
/** Attempts of a finalizer write that meets conflicts. */
const CONFLICT_TRIES = 3;

function snapshotPath(ref: { namespace: string; name?: string }): string {
  const base = `/apis/${GROUP_VERSION}/namespaces/${ref.namespace}/volumesnapshots`;
  return ref.name === undefined ? base : `${base}/${ref.name}`;
}

function pick(source: Record<string, unknown> | undefined, keys: string[]) {
  const result: Record<string, unknown> = {};
  for (const key of keys) if (source?.[key] !== undefined) result[key] = source[key];
  return result;
}

function metadataOf(raw: RawObject): Metadata {
  const source = raw.metadata as Metadata;
  return pick(source as unknown as Record<string, unknown>, [
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "annotations",
    "finalizers",
    "deletionTimestamp",
  ]) as unknown as Metadata;
}

/** A VolumeSnapshot with the fields a restore and the orphan sweep read. */
export function trimVolumeSnapshot(raw: RawObject): VolumeSnapshot {
  const spec = (raw["spec"] ?? {}) as { source?: Record<string, unknown> };
  const status = raw["status"] as Record<string, unknown> | undefined;
  return {
    metadata: metadataOf(raw) as VolumeSnapshot["metadata"],
    spec: {
      source: pick(spec.source, ["persistentVolumeClaimName", "volumeSnapshotContentName"]),
    },
    ...(status === undefined ? {} : {
      status: pick(status, ["boundVolumeSnapshotContentName", "readyToUse", "restoreSize"]),
    }),
  };
}

/** A VolumeSnapshotContent with the fields a restore checks. */
export function trimVolumeSnapshotContent(raw: RawObject): VolumeSnapshotContent {
  const spec = (raw["spec"] ?? {}) as Record<string, unknown> & {
    source?: Record<string, unknown>;
  };
  const status = raw["status"] as Record<string, unknown> | undefined;
  return {
    metadata: metadataOf(raw),
    spec: {
      driver: String(spec["driver"] ?? ""),
      volumeSnapshotRef: pick(
        spec["volumeSnapshotRef"] as Record<string, unknown> | undefined,
        ["namespace", "name", "uid"],
      ),
      ...pick(spec, ["sourceVolumeMode"]),
      source: pick(spec.source, ["volumeHandle", "snapshotHandle"]),
    },
    ...(status === undefined ? {} : { status: pick(status, ["snapshotHandle"]) }),
  };
}

/** Reads a VolumeSnapshot; undefined when it does not exist. */
export async function readVolumeSnapshot(
  rest: KubeRest,
  ref: { namespace: string; name: string },
  signal?: AbortSignal,
): Promise<VolumeSnapshot | undefined> {
  try {
    const raw = await rest.request<RawObject>({
      method: "GET",
      path: snapshotPath(ref),
      ...(signal === undefined ? {} : { signal }),
    });
    return trimVolumeSnapshot(raw);
  } catch (error) {
    if (hasStatus(error, 404)) return undefined;
    throw error;
  }
}

/** Reads a VolumeSnapshotContent; undefined when it does not exist. */
export async function readVolumeSnapshotContent(
  rest: KubeRest,
  name: string,
  signal?: AbortSignal,
): Promise<VolumeSnapshotContent | undefined> {
  try {
    const raw = await rest.request<RawObject>({
      method: "GET",
      path: `/apis/${GROUP_VERSION}/volumesnapshotcontents/${name}`,
      ...(signal === undefined ? {} : { signal }),
    });
    return trimVolumeSnapshotContent(raw);
  } catch (error) {
    if (hasStatus(error, 404)) return undefined;
    throw error;
  }
}

/** What a finalizer write did. */
export type FinalizerWrite = "changed" | "unchanged" | "gone" | "forbidden" | "conflict";

/**
 * Adds or removes one finalizer of a VolumeSnapshot. `current` (a copy read
 * a moment ago, or an informer's) saves the first read. A conflict is
 * retried with a fresh read, at most `tries` writes in all (1: a conflict
 * ends the attempt, for a caller that retries on its own schedule). Where
 * RBAC forbids patch (`patches` remembers), it is upstream's Update of the
 * snapshot read, under the same resourceVersion.
 */
export async function changeSnapshotFinalizer(
  rest: KubeRest,
  change: { ref: { namespace: string; name: string }; finalizer: string; action: "add" | "remove" },
  options: {
    current?: VolumeSnapshot;
    tries?: number;
    signal?: AbortSignal;
    patches?: PatchPermissions;
  } = {},
): Promise<FinalizerWrite> {
  const { signal } = options;
  const tries = options.tries ?? CONFLICT_TRIES;
  for (let attempt = 1;; attempt++) {
    let snapshot = attempt === 1 ? options.current : undefined;
    try {
      snapshot ??= await readVolumeSnapshot(rest, change.ref, signal);
      if (snapshot === undefined) return "gone";
      const next = finalizersAfter(snapshot.metadata.finalizers ?? [], change);
      if (next === undefined) return "unchanged";
      const { resourceVersion } = snapshot.metadata;
      await patchOrUpdate(rest, options.patches ?? new PatchPermissions(), {
        resource: `volumesnapshots.${SNAPSHOT_API_GROUP}`,
        path: snapshotPath(change.ref),
        patch: {
          contentType: "application/merge-patch+json",
          body: { metadata: { resourceVersion, finalizers: next } },
        },
        apply: (object) => {
          (object.metadata as { finalizers?: string[] }).finalizers = next;
          return true;
        },
        resourceVersion,
        signal,
      });
      return "changed";
    } catch (error) {
      if (hasStatus(error, 404)) return "gone";
      if (hasStatus(error, 403)) return "forbidden";
      if (!hasStatus(error, 409)) throw error;
      if (attempt >= tries) return "conflict";
    }
  }
}

/**
 * Whether the API server serves VolumeSnapshots. "Served" is final (a CRD
 * removed later makes reads fail with their own error); "not served" is
 * asked again at every call, so that CRDs installed later are found without
 * a restart. The asking goes through KubeApi's discovery (discovery.ts),
 * which keeps each answer for a few seconds and shares one request between
 * askers at the same moment, so a run of restores sends one request. Logs
 * when it finds them missing and when they appear.
 */
export class SnapshotDiscovery {
  readonly #servesResource: (groupVersion: string, resource: string) => Promise<boolean>;
  readonly #logger: Logger | undefined;
  #served: boolean | undefined;

  constructor(
    servesResource: (groupVersion: string, resource: string) => Promise<boolean>,
    options: { logger?: Logger | undefined },
  ) {
    this.#servesResource = servesResource;
    this.#logger = options.logger;
  }

  /** Whether VolumeSnapshots are served; asks the API server until they are. */
  async served(): Promise<boolean> {
    if (this.#served === true) return true;
    const served = await this.#servesResource(GROUP_VERSION, "volumesnapshots");
    if (served && this.#served === false) {
      this.#logger?.notice(
        "VolumeSnapshot API is now served: restoring from snapshots is available",
      );
    }
    if (!served && this.#served === undefined) {
      this.#logger?.notice(
        `VolumeSnapshot API (${GROUP_VERSION}) is not served: claims that restore a snapshot get a ` +
          "Warning event until external-snapshotter's CRDs are installed (no restart needed)",
      );
    }
    this.#served = served;
    return served;
  }
}

/**
 * The informer of the orphan sweep: every VolumeSnapshot is listed and
 * watched, but only those carrying `finalizer` are kept.
 */
export function createSnapshotFinalizerInformer(
  rest: KubeRest,
  options: { finalizer: string; logger: Logger },
): Informer<VolumeSnapshot> {
  return new Informer<VolumeSnapshot>(rest, {
    resource: "volumesnapshots",
    path: `/apis/${GROUP_VERSION}/volumesnapshots`,
    trim: (raw) => {
      const finalizers = (raw.metadata as Metadata).finalizers ?? [];
      return finalizers.includes(options.finalizer) ? trimVolumeSnapshot(raw) : undefined;
    },
    resourceVersionOf: (snapshot) => snapshot.metadata.resourceVersion,
    logger: options.logger,
  });
}

/**
 * Whether the agent may list VolumeSnapshots (upstream's preflight of the
 * sweep: a List with limit 1, and the sweep stays off when it is forbidden).
 */
export async function mayListSnapshots(rest: KubeRest, signal?: AbortSignal): Promise<boolean> {
  try {
    await rest.request({
      method: "GET",
      path: `/apis/${GROUP_VERSION}/volumesnapshots`,
      query: { limit: 1 },
      ...(signal === undefined ? {} : { signal }),
    });
    return true;
  } catch (error) {
    if (hasStatus(error, 403)) return false;
    throw error;
  }
}
