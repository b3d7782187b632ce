/**
 * A clone's source claim and PV, checked as upstream's `getPVCSource`
 * (external-provisioner pkg/controller/controller.go) does, in its order
 * and with its messages, then located (location.ts).
 */
import { CLONE_PROTECTION_FINALIZER } from "../../model/keys.ts";
import type { Claim, PersistentVolume } from "../../model/objects.ts";
import { parseQuantity } from "../../model/quantity.ts";
import { type CloneFacts, invalid, type SourceCheck, type SourceCheckInput } from "./checks.ts";
import { locateSource } from "./holder.ts";

const NOT_BOUND = "claim in dataSource not bound or invalid";

/** Checks the source claim and its PV; the content source is the PV's volume handle. */
export function checkCloneSource(
  facts: CloneFacts,
  input: SourceCheckInput & { sourceName: string },
): SourceCheck {
  const { claim } = input;
  if (!facts.claim.ok) {
    return invalid(
      `error getting PVC ${input.sourceName} (namespace ${
        JSON.stringify(claim.metadata.namespace)
      }) from api server: ${facts.claim.error}`,
    );
  }
  const source = facts.claim.value;
  const claimProblem = checkSourceClaim(source, input);
  if (claimProblem !== undefined) return invalid(claimProblem);
  if (facts.volume === undefined) {
    return invalid(`volume name is empty in source PVC ${source.metadata.name}`);
  }
  if (!facts.volume.ok) return invalid(`${NOT_BOUND} (${facts.volume.error})`);
  const pv = facts.volume.value;
  const pvProblem = checkSourceVolume(pv, { source, driver: input.storageClass.provisioner });
  if (pvProblem !== undefined) {
    // Upstream logs the cause and reports only NOT_BOUND; the cause is what a user must fix.
    return invalid(
      `${NOT_BOUND} (PersistentVolume ${JSON.stringify(pv.metadata.name)}: ${pvProblem})`,
    );
  }
  const modeProblem = volumeModeProblem(claim.spec.volumeMode, pv.spec.volumeMode);
  if (modeProblem !== undefined) return invalid(modeProblem);
  return {
    kind: "checked",
    contentSource: { volume: { volume_id: pv.spec.csi!.volumeHandle } },
    location: locateSource(facts, input.segment),
    warnings: [],
  };
}

/** Phase, deletion, classes, size and volume name of the source claim, in upstream's order. */
function checkSourceClaim(source: Claim, input: SourceCheckInput & { sourceName: string }) {
  const name = input.sourceName;
  const phase = source.status?.phase ?? "";
  if (phase !== "Bound") {
    // Upstream prints the whole status struct (`%v`); its phase is what matters.
    return `the PVC DataSource ${name} must have a status of Bound.  Got ${phase || "no phase"}`;
  }
  // Not upstream: a source that is being deleted but carries the cloning
  // protection finalizer has a clone in progress, maybe this one, which
  // must be allowed to finish (upstream refuses its retries, and the source
  // then waits for a clone that never ends). Upstream does the same for
  // snapshots being deleted.
  const protectedSource = source.metadata.finalizers?.includes(CLONE_PROTECTION_FINALIZER);
  if (source.metadata.deletionTimestamp && !protectedSource) {
    return `the PVC DataSource ${name} is currently being deleted`;
  }
  if ((source.spec.storageClassName ?? undefined) === undefined) {
    return `the source PVC (${source.metadata.name}) storageclass cannot be empty`;
  }
  if ((input.claim.spec.storageClassName ?? undefined) === undefined) {
    return `the requested PVC (${input.claim.metadata.name}) storageclass cannot be empty`;
  }
  const sourceBytes = requestOf(source);
  if (input.requestedBytes < sourceBytes) {
    return "error, new PVC request must be greater than or equal in size to the specified PVC " +
      `data source, requested ${input.requestedBytes} but source is ${sourceBytes}`;
  }
  return undefined;
}

/** `Quantity.Value()` of the source's request: 0 when there is none. */
function requestOf(claim: Claim): bigint {
  const text = claim.spec.resources?.requests?.storage;
  if (text === undefined) return 0n;
  const parsed = parseQuantity(text);
  return parsed.ok ? parsed.value : 0n;
}

/** Why the PV cannot be the clone's source, in upstream's order; undefined when it can. */
function checkSourceVolume(
  pv: PersistentVolume,
  expected: { source: Claim; driver: string },
): string | undefined {
  const csi = pv.spec.csi;
  if (csi === undefined) return "it is not a CSI volume";
  if (csi.driver !== expected.driver) {
    return `its driver ${JSON.stringify(csi.driver)} is not the StorageClass's provisioner ` +
      JSON.stringify(expected.driver);
  }
  const ref = pv.spec.claimRef;
  if (ref === undefined) return "it is not bound";
  const { metadata } = expected.source;
  if (
    ref.uid !== metadata.uid || ref.namespace !== metadata.namespace || ref.name !== metadata.name
  ) {
    return `it is bound to another claim (${ref.namespace}/${ref.name})`;
  }
  const phase = pv.status?.phase ?? "";
  if (phase !== "Bound") return `its status is ${JSON.stringify(phase)}, not "Bound"`;
  return undefined;
}

/** Upstream's volume mode rule for clones: Block to Block, Filesystem (or unset) to Filesystem. */
function volumeModeProblem(
  requested: string | undefined,
  source: string | undefined,
): string | undefined {
  const prefix = "the source PVC and destination PVCs must have the same volume mode for cloning. ";
  const wantsFilesystem = requested === undefined || requested === "Filesystem";
  if (wantsFilesystem && source !== undefined && source !== "Filesystem") {
    return `${prefix} Source is Block, but new PVC requested Filesystem`;
  }
  if (requested === "Block" && source !== "Block") {
    return `${prefix} Source is Filesystem, but new PVC requested Block`;
  }
  return undefined;
}
