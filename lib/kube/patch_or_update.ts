/**
 * Writes to objects that upstream external-provisioner changes with an
 * Update (claims, VolumeSnapshots), whose rbac.yaml grants update but not
 * patch on them. A patch sends only the change and needs no read; where RBAC
 * forbids it, the write falls back to what upstream does: read the object,
 * apply the same change, and PUT it back under a resourceVersion
 * precondition. Once a resource's patch was forbidden, later writes go
 * straight to the read and PUT.
 */
import type { Logger } from "../log/logger.ts";
import type { RawObject } from "./informer/informer.ts";
import { hasStatus, type KubeRest } from "./rest/client.ts";

/** Which resources the agent may not patch, as learnt from 403 answers (one per process). */
export class PatchPermissions {
  readonly #forbidden = new Set<string>();
  readonly #logger: Logger | undefined;

  constructor(logger?: Logger) {
    this.#logger = logger;
  }

  /** Whether a patch of `resource` was refused before. */
  forbidden(resource: string): boolean {
    return this.#forbidden.has(resource);
  }

  /** Remembers that patch of `resource` is forbidden; says so once. */
  learnForbidden(resource: string): void {
    if (this.#forbidden.has(resource)) return;
    this.#forbidden.add(resource);
    this.#logger?.info(
      { resource },
      `RBAC forbids patch on ${resource}: writing them with a read and an update, as ` +
        `upstream does; granting patch on ${resource} would save that read`,
    );
  }
}

/** One write: the patch, and the same change applied to a copy read from the API server. */
export interface PatchOrUpdate {
  /** The resource as RBAC names it, e.g. "persistentvolumeclaims". */
  resource: string;
  path: string;
  patch: { contentType: string; body: unknown };
  /**
   * Applies the change to the object read; false when it holds the change
   * already (nothing is written).
   */
  apply: (object: RawObject) => boolean;
  /**
   * The precondition of the update: the resourceVersion of the copy the
   * caller decided on (the patch carries the same); by default the one read.
   */
  resourceVersion?: string | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Patches the object, or, when patch is forbidden, reads it, applies the
 * change and updates it. A 409 or 404 (of either way) and a 403 of the
 * update are thrown to the caller as they came.
 */
export async function patchOrUpdate(
  rest: KubeRest,
  permissions: PatchPermissions,
  write: PatchOrUpdate,
): Promise<void> {
  const signal = write.signal === undefined ? {} : { signal: write.signal };
  if (!permissions.forbidden(write.resource)) {
    try {
      await rest.request({
        method: "PATCH",
        path: write.path,
        contentType: write.patch.contentType,
        body: write.patch.body,
        ...signal,
      });
      return;
    } catch (error) {
      if (!hasStatus(error, 403)) throw error;
      permissions.learnForbidden(write.resource);
    }
  }
  await readAndUpdate(rest, write);
}

/** Upstream's write: the object read, changed, and PUT back under the precondition. */
async function readAndUpdate(rest: KubeRest, write: PatchOrUpdate): Promise<void> {
  const signal = write.signal === undefined ? {} : { signal: write.signal };
  const object = await rest.request<RawObject>({ method: "GET", path: write.path, ...signal });
  if (!write.apply(object)) return;
  const metadata = object.metadata as { resourceVersion?: string };
  if (write.resourceVersion !== undefined) metadata.resourceVersion = write.resourceVersion;
  await rest.request({ method: "PUT", path: write.path, body: object, unread: true, ...signal });
}

/** Sets (a string) or removes (null) annotations of an object read. */
export function setAnnotations(
  object: RawObject,
  annotations: Record<string, string | null>,
): void {
  const metadata = object.metadata as { annotations?: Record<string, string> };
  const current = { ...metadata.annotations };
  for (const [key, value] of Object.entries(annotations)) {
    if (value === null) delete current[key];
    else current[key] = value;
  }
  metadata.annotations = current;
}

/** A list of finalizers with one added or removed; undefined when it is so already. */
export function finalizersAfter(
  finalizers: readonly string[],
  change: { finalizer: string; action: "add" | "remove" },
): string[] | undefined {
  if (finalizers.includes(change.finalizer) === (change.action === "add")) return undefined;
  return change.action === "add"
    ? [...finalizers, change.finalizer]
    : finalizers.filter((finalizer) => finalizer !== change.finalizer);
}

/** Adds or removes one finalizer of an object read; false when it is so already. */
export function changeFinalizer(
  object: RawObject,
  change: { finalizer: string; action: "add" | "remove" },
): boolean {
  const metadata = object.metadata as { finalizers?: string[] };
  const next = finalizersAfter(metadata.finalizers ?? [], change);
  if (next === undefined) return false;
  metadata.finalizers = next;
  return true;
}
