/**
 * A restore's VolumeSnapshot and VolumeSnapshotContent, checked as
 * upstream's `getSnapshotSource` (external-provisioner
 * pkg/controller/controller.go) does, in its order and with its messages
 * (the restore size rule and --prevent-volume-mode-conversion included),
 * then located by the volume the snapshot was taken of.
 */
import {
  ANN_ALLOW_VOLUME_MODE_CHANGE,
  SNAPSHOT_SOURCE_PROTECTION_FINALIZER,
} from "../../model/keys.ts";
import type { Claim, VolumeSnapshot, VolumeSnapshotContent } from "../../model/objects.ts";
import { parseQuantity } from "../../model/quantity.ts";
import { invalid, type SnapshotFacts, type SourceCheck, type SourceCheckInput } from "./checks.ts";
import { locateSource } from "./holder.ts";

/** Checks the snapshot and its content; the content source is the content's snapshot handle. */
export function checkSnapshotSource(
  facts: SnapshotFacts,
  input: SourceCheckInput & { sourceName: string },
): SourceCheck {
  const name = input.sourceName;
  if (!facts.snapshot.ok) {
    return invalid(`error getting snapshot ${name} from api server: ${facts.snapshot.error}`);
  }
  const snapshot = facts.snapshot.value;
  const deleting = snapshot.metadata.deletionTimestamp !== undefined &&
    !snapshot.metadata.finalizers?.includes(SNAPSHOT_SOURCE_PROTECTION_FINALIZER);
  if (deleting) return invalid(`snapshot ${name} is being deleted`);
  const contentName = snapshot.status?.boundVolumeSnapshotContentName;
  if (contentName === undefined || facts.content === undefined) {
    return invalid(`snapshot ${name} not bound`);
  }
  if (!facts.content.ok) {
    return invalid(`error getting snapshotcontent ${contentName} for snapshot ${name}`);
  }
  const content = facts.content.value;
  const contentProblem = checkContent(content, { snapshot, contentName, name, input });
  if (contentProblem !== undefined) return invalid(contentProblem);
  const handle = content.status?.snapshotHandle;
  if (handle === undefined) return invalid(`snapshot handle ${name} is not available`);
  const size = restoreSizeCheck(snapshot, input.requestedBytes);
  if (size.kind === "invalid") return size;
  if (input.preventVolumeModeConversion) {
    const conversion = volumeModeConversionProblem(input.claim, content);
    if (conversion !== undefined) return invalid(conversion);
  }
  return {
    kind: "checked",
    contentSource: { snapshot: { snapshot_id: handle } },
    location: locateSource(facts, input.segment),
    warnings: size.warnings,
  };
}

/** The content's binding, driver and readiness, in upstream's order. */
function checkContent(
  content: VolumeSnapshotContent,
  context: {
    snapshot: VolumeSnapshot;
    contentName: string;
    name: string;
    input: SourceCheckInput;
  },
): string | undefined {
  const { snapshot, contentName, name, input } = context;
  const ref = content.spec.volumeSnapshotRef;
  const { metadata } = snapshot;
  if (
    ref.uid !== metadata.uid || ref.namespace !== metadata.namespace || ref.name !== metadata.name
  ) {
    return `snapshotcontent ${contentName} for snapshot ${name} is bound to a different snapshot`;
  }
  if (content.spec.driver !== input.storageClass.provisioner) {
    return `snapshotcontent ${contentName} for snapshot ${name} is not handled by CSI driver ` +
      `of StorageClass ${input.storageClass.metadata.name}`;
  }
  if (snapshot.status?.readyToUse !== true) return `snapshot ${name} is not Ready`;
  return undefined;
}

/**
 * The restore size rule: the request must be at least the snapshot's
 * status.restoreSize when that is set; a bigger request only warns (the
 * driver must expand the volume).
 */
function restoreSizeCheck(
  snapshot: VolumeSnapshot,
  requested: bigint,
): { kind: "ok"; warnings: string[] } | { kind: "invalid"; message: string } {
  const text = snapshot.status?.restoreSize;
  if (text === undefined) return { kind: "ok", warnings: [] };
  const parsed = parseQuantity(text);
  const restoreSize = parsed.ok ? parsed.value : 0n;
  const name = snapshot.metadata.name;
  if (requested < restoreSize) {
    return invalid(
      `requested volume size ${requested} is less than the size ${restoreSize} for the source snapshot ${name}`,
    );
  }
  if (requested > restoreSize) {
    return {
      kind: "ok",
      warnings: [
        `requested volume size ${requested} is greater than the size ${restoreSize} for the ` +
        `source snapshot ${name}. Volume plugin needs to handle volume expansion.`,
      ],
    };
  }
  return { kind: "ok", warnings: [] };
}

/**
 * --prevent-volume-mode-conversion: a restore into another volume mode
 * than the snapshot's source needs the content's allow annotation, true.
 */
function volumeModeConversionProblem(
  claim: Claim,
  content: VolumeSnapshotContent,
): string | undefined {
  const from = content.spec.sourceVolumeMode;
  const to = claim.spec.volumeMode;
  if (from === undefined || to === undefined || from === to) return undefined;
  const prefix = `requested volume ${claim.metadata.namespace}/${claim.metadata.name} modifies ` +
    "the mode of the source volume but does not have permission to do so. ";
  const allow = content.metadata.annotations?.[ANN_ALLOW_VOLUME_MODE_CHANGE];
  const contentName = content.metadata.name;
  if (allow === undefined) {
    return `${prefix}${ANN_ALLOW_VOLUME_MODE_CHANGE} annotation is not present on snapshotcontent ${contentName}`;
  }
  const parsed = parseGoBool(allow);
  if (parsed === undefined) {
    return `${prefix}failed to convert ${ANN_ALLOW_VOLUME_MODE_CHANGE} annotation value to ` +
      `boolean with error: strconv.ParseBool: parsing ${JSON.stringify(allow)}: invalid syntax`;
  }
  if (!parsed) {
    return `${prefix}${ANN_ALLOW_VOLUME_MODE_CHANGE} is set to false on snapshotcontent ${contentName}`;
  }
  return undefined;
}

/** Go's strconv.ParseBool. */
function parseGoBool(text: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(text)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(text)) return false;
  return undefined;
}
