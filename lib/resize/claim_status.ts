/**
 * The claim status writes of external-resizer v2.2.1 (pkg/controller
 * resize_status.go), as pure functions from the claim to the claim it leaves:
 * the resize conditions merged as util.MergeResizeConditionsOfPVC merges them,
 * allocatedResources, allocatedResourceStatuses and the
 * node-expansion-not-required annotation.
 */
import type { Claim, ClaimCondition, ClaimStatus } from "../model/objects.ts";
import { RESIZE_STATUS } from "./decide.ts";

/** The annotation external-resizer puts on a claim whose expansion needed nothing on the node. */
export const ANN_NODE_EXPANSION_NOT_REQUIRED = "volume.kubernetes.io/node-expansion-not-required";

/** The message of FileSystemResizePending, upstream's words. */
export const FS_RESIZE_PENDING_MESSAGE =
  "Waiting for user to (re-)start a pod to finish file system resize of volume on node.";

const RESIZE_CONDITIONS = new Set([
  "Resizing",
  "FileSystemResizePending",
  "ControllerResizeError",
  "NodeResizeError",
]);

/** util.MergeResizeConditionsOfPVC: other conditions kept, resize ones replaced or (unless kept) dropped. */
export function mergeResizeConditions(
  old: readonly ClaimCondition[],
  added: readonly ClaimCondition[],
  keepOld: boolean,
): ClaimCondition[] {
  const pending = new Map(added.map((condition) => [condition.type, condition]));
  const result: ClaimCondition[] = [];
  for (const condition of old) {
    if (!RESIZE_CONDITIONS.has(condition.type)) {
      result.push(condition);
      continue;
    }
    const replacement = pending.get(condition.type);
    if (replacement !== undefined) {
      result.push(replacement);
      pending.delete(condition.type);
    } else if (keepOld) {
      result.push(condition);
    }
  }
  return [...result, ...pending.values()];
}

/** A condition that is True since `now` (metav1.Now(), to the second). */
function condition(type: string, now: Date, message?: string): ClaimCondition {
  const lastTransitionTime = now.toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    type,
    status: "True",
    lastProbeTime: null,
    lastTransitionTime,
    ...(message === undefined ? {} : { message }),
  };
}

function withStatus(claim: Claim, change: Partial<ClaimStatus>): Claim {
  return { ...claim, status: { ...claim.status, ...change } };
}

function withoutAnnotation(claim: Claim, key: string): Claim {
  const annotations = claim.metadata.annotations;
  if (annotations === undefined || !Object.hasOwn(annotations, key)) return claim;
  const { [key]: _dropped, ...kept } = annotations;
  return { ...claim, metadata: { ...claim.metadata, annotations: kept } };
}

function conditionsOf(claim: Claim): ClaimCondition[] {
  return claim.status?.conditions ?? [];
}

/** markControllerResizeInProgress: Resizing, the target recorded in allocatedResources. */
export function markResizeInProgress(
  claim: Claim,
  size: string,
  options: { updateStatus: boolean; now: Date },
): Claim {
  const conditions = mergeResizeConditions(
    conditionsOf(claim),
    [condition("Resizing", options.now)],
    !options.updateStatus,
  );
  const statuses = options.updateStatus
    ? { ...claim.status?.allocatedResourceStatuses, storage: RESIZE_STATUS.controllerInProgress }
    : claim.status?.allocatedResourceStatuses;
  return withStatus(withoutAnnotation(claim, ANN_NODE_EXPANSION_NOT_REQUIRED), {
    conditions,
    allocatedResources: { ...claim.status?.allocatedResources, storage: size },
    ...(statuses === undefined ? {} : { allocatedResourceStatuses: statuses }),
  });
}

/** markForPendingNodeExpansion: FileSystemResizePending, NodeResizePending. */
export function markNodeExpansionPending(claim: Claim, now: Date): Claim {
  const conditions = mergeResizeConditions(
    conditionsOf(claim),
    [condition("FileSystemResizePending", now, FS_RESIZE_PENDING_MESSAGE)],
    true,
  );
  return withStatus(withoutAnnotation(claim, ANN_NODE_EXPANSION_NOT_REQUIRED), {
    conditions,
    allocatedResourceStatuses: {
      ...claim.status?.allocatedResourceStatuses,
      storage: RESIZE_STATUS.nodePending,
    },
  });
}

/**
 * markControllerExpansionInfeasible (infeasible: true) and
 * markControllerExpansionFailedCondition: ControllerResizeError with the error.
 */
export function markControllerResizeError(
  claim: Claim,
  error: string,
  options: { infeasible: boolean; now: Date },
): Claim {
  const conditions = mergeResizeConditions(
    conditionsOf(claim),
    [condition("ControllerResizeError", options.now, `failed to expand pvc with ${error}`)],
    true,
  );
  if (!options.infeasible) return withStatus(claim, { conditions });
  return withStatus(claim, {
    conditions,
    allocatedResourceStatuses: {
      ...claim.status?.allocatedResourceStatuses,
      storage: RESIZE_STATUS.controllerInfeasible,
    },
  });
}

/** markOverallExpansionAsFinished: the new capacity, resize conditions and status cleared. */
export function markExpansionFinished(claim: Claim, capacity: string): Claim {
  const { storage: _done, ...statuses } = claim.status?.allocatedResourceStatuses ?? {};
  const finished = withStatus(claim, {
    capacity: { ...claim.status?.capacity, storage: capacity },
    conditions: mergeResizeConditions(conditionsOf(claim), [], false),
    allocatedResourceStatuses: statuses,
  });
  const annotations = { ...claim.metadata.annotations, [ANN_NODE_EXPANSION_NOT_REQUIRED]: "true" };
  return { ...finished, metadata: { ...finished.metadata, annotations } };
}

/**
 * The merge patch from `before` to `after` of what these writes change: the
 * status fields and the one annotation. Conditions go whole (the list
 * replaces the old one), a status key that went away is sent as null.
 */
export function claimStatusPatch(
  before: Claim,
  after: Claim,
  options: { resourceVersionCheck: boolean },
): Record<string, unknown> {
  const key = ANN_NODE_EXPANSION_NOT_REQUIRED;
  const annotationBefore = before.metadata.annotations?.[key];
  const annotationAfter = after.metadata.annotations?.[key];
  const metadata: Record<string, unknown> = {};
  if (options.resourceVersionCheck) metadata.resourceVersion = before.metadata.resourceVersion;
  if (annotationBefore !== annotationAfter) {
    metadata.annotations = { [key]: annotationAfter ?? null };
  }
  const status: Record<string, unknown> = {};
  const b = before.status ?? {};
  const a = after.status ?? {};
  if (JSON.stringify(b.conditions ?? []) !== JSON.stringify(a.conditions ?? [])) {
    status.conditions = a.conditions ?? [];
  }
  for (const field of ["capacity", "allocatedResources", "allocatedResourceStatuses"] as const) {
    const change = mapChange(b[field], a[field]);
    if (change !== undefined) status[field] = change;
  }
  return { metadata, status };
}

function mapChange(
  before: Record<string, string | undefined> | undefined,
  after: Record<string, string | undefined> | undefined,
): Record<string, string | null> | undefined {
  const change: Record<string, string | null> = {};
  for (const key of new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])) {
    const next = after?.[key];
    if (before?.[key] !== next) change[key] = next ?? null;
  }
  return Object.keys(change).length === 0 ? undefined : change;
}
