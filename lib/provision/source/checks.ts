/**
 * The checks upstream makes on a claim's data source before CreateVolume
 * (external-provisioner pkg/controller/controller.go, `getVolumeContentSource`)
 * as pure functions over what was read: the source claim and its PV for a
 * clone (clone_checks.ts), the VolumeSnapshot and its content for a restore
 * (snapshot_checks.ts). Each check keeps upstream's order and wording; the
 * caller wraps a failure in upstream's `error getting handle for DataSource
 * Type <kind> by Name <name>: ...`. What this node adds comes last: where the
 * source lives (location.ts).
 */
import type { Segments, VolumeContentSource } from "../../csi/types.ts";
import type {
  Claim,
  PersistentVolume,
  StorageClass,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from "../../model/objects.ts";
import type { SourceLocation } from "./location.ts";

/** A read of one object: its value, or why it could not be read (the API's message). */
export type Read<T> = { ok: true; value: T } | { ok: false; error: string };

/** What was read for a clone. */
export interface CloneFacts {
  kind: "clone";
  /** The source claim. */
  claim: Read<Claim>;
  /** Its PV (spec.volumeName), when the claim names one. */
  volume?: Read<PersistentVolume>;
}

/** What was read for a restore. */
export interface SnapshotFacts {
  kind: "snapshot";
  snapshot: Read<VolumeSnapshot>;
  /** status.boundVolumeSnapshotContentName, when the snapshot names one. */
  content?: Read<VolumeSnapshotContent>;
  /**
   * The PV of the volume the snapshot was taken of (by the content's source
   * volume handle), or why it is not known.
   */
  sourceVolume?: SourceVolume;
}

/** The PV of the volume a snapshot was taken of, or why it is not known. */
export type SourceVolume = { ok: true; value: PersistentVolume } | { ok: false; reason: string };

export type SourceFacts = CloneFacts | SnapshotFacts;

/** The checks passed: what CreateVolume gets, and where the source lives. */
interface CheckedSource {
  kind: "checked";
  contentSource: VolumeContentSource;
  location: SourceLocation;
  /** Upstream's warnings to log (a restore bigger than its snapshot). */
  warnings: string[];
}

/** A check failed: upstream's message (without the "error getting handle" prefix). */
interface InvalidSource {
  kind: "invalid";
  message: string;
}

export type SourceCheck = CheckedSource | InvalidSource;

/** What the checks compare against. */
export interface SourceCheckInput {
  claim: Claim;
  storageClass: StorageClass;
  /** The claim's requested bytes (already checked). */
  requestedBytes: bigint;
  /** This node's topology segment. */
  segment: Segments | null;
  /** --prevent-volume-mode-conversion. */
  preventVolumeModeConversion: boolean;
}

export function invalid(message: string): InvalidSource {
  return { kind: "invalid", message };
}
