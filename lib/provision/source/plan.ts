/**
 * The data source part of prepareProvision: upstream's checks of the
 * snapshot or source claim (checks.ts), then this node's own rule:
 * a source that lives on another node gets no CreateVolume here, but a
 * Warning that says where it is, and the claim goes back to the scheduler.
 */
import type { VolumeContentSource } from "../../csi/types.ts";
import { atClaim } from "../../model/messages.ts";
import type { Claim, StorageClass, VolumeSnapshot } from "../../model/objects.ts";
import { checkCloneSource } from "./clone_checks.ts";
import type { SourceCheckInput, SourceFacts } from "./checks.ts";
import type { ClaimSource } from "./classify.ts";
import { type Problem, problem } from "../outcome.ts";
import { checkSnapshotSource } from "./snapshot_checks.ts";
import { sourceElsewhereMessage, type SourceLocation, sourceNotFoundMessage } from "./location.ts";

/** The source, checked: what CreateVolume gets and what the attempt protects. */
export interface PlannedSource {
  kind: "planned";
  source: ClaimSource;
  contentSource: VolumeContentSource;
  /** "here", or "unknown" (then a NotFound from CreateVolume is explained). */
  location: SourceLocation;
  warnings: string[];
  /** The VolumeSnapshot as read for the checks (its finalizer is added without reading it again). */
  snapshot?: VolumeSnapshot;
}

/** Checks the source in upstream's order, then where it lives. */
export function plannedSource(
  source: ClaimSource,
  input: {
    claim: Claim;
    storageClass: StorageClass;
    source?: SourceFacts | undefined;
    requestedBytes: bigint;
  },
  options: {
    segment: SourceCheckInput["segment"];
    preventVolumeModeConversion: boolean;
    nodeName: string;
    driverName: string;
  },
): PlannedSource | Problem {
  const { claim } = input;
  const kindName = source.kind === "snapshot" ? "VolumeSnapshot" : "PersistentVolumeClaim";
  const facts = input.source;
  if (facts === undefined || facts.kind !== source.kind) {
    // The caller reads the source before preparing; this is a programming error.
    return problem(`the ${kindName} ${source.name} was not read`, { state: "noChange" });
  }
  const checkInput = {
    claim,
    storageClass: input.storageClass,
    requestedBytes: input.requestedBytes,
    segment: options.segment,
    preventVolumeModeConversion: options.preventVolumeModeConversion,
    sourceName: source.name,
  };
  const checked = facts.kind === "clone"
    ? checkCloneSource(facts, checkInput)
    : checkSnapshotSource(facts, checkInput);
  if (checked.kind === "invalid") {
    const message =
      `error getting handle for DataSource Type ${kindName} by Name ${source.name}: ` +
      checked.message;
    return problem(atClaim(message, claim, source.field), { state: "noChange" });
  }
  if (checked.location.kind === "elsewhere") {
    const message = sourceElsewhereMessage(source, checked.location, options);
    return problem(message, { state: "reschedule", retry: "slow" });
  }
  return {
    kind: "planned",
    source,
    contentSource: checked.contentSource,
    location: checked.location,
    warnings: checked.warnings,
    ...(facts.kind === "snapshot" && facts.snapshot.ok ? { snapshot: facts.snapshot.value } : {}),
  };
}

/**
 * A NotFound from CreateVolume for a source whose node is not known (a
 * pre-provisioned snapshot, or a source volume gone from the cluster):
 * explained, and handed back to the scheduler, as a source known to be on
 * another node is. Undefined for every other failure (upstream's handling).
 */
export function explainSourceMiss(
  failure: { code: string; message: string },
  plan: { source: PlannedSource | undefined },
  options: { nodeName: string },
): Problem | undefined {
  const planned = plan.source;
  if (failure.code !== "NotFound" || planned?.location.kind !== "unknown") return undefined;
  const message = sourceNotFoundMessage(
    planned.source,
    { message: failure.message, reason: planned.location.reason },
    options,
  );
  return problem(message, { state: "reschedule", retry: "slow" });
}
