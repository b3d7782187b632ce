/**
 * What the protection controllers need from the world, declared here where
 * it is used and kept narrow. main.ts passes the claim informer, this
 * node's PV cache, lib/kube/api.ts and a factory of the VolumeSnapshot
 * informer; unit tests pass small fakes.
 */
import type { Claim, PersistentVolume, VolumeSnapshot } from "../model/objects.ts";

/** A change of a cached claim. */
export interface ClaimChange {
  key: string;
  old: Claim | undefined;
  new: Claim | undefined;
}

/**
 * The claim informer: it keeps the claims that carry the cloning-protection
 * finalizer and every Pending claim with a claim or snapshot data source
 * (lib/kube/trim.ts), whatever their node.
 */
export interface ClaimCache {
  get(key: string): Claim | undefined;
  list(): Claim[];
  onChange(handler: (change: ClaimChange) => void): void;
}

/** This node's PVs, by name. */
export interface VolumeCache {
  get(name: string): PersistentVolume | undefined;
}

/** The claim write of the cloning-protection controller. */
export interface CloneApi {
  changeClaimFinalizer(
    ref: { namespace: string; name: string },
    change: { finalizer: string; action: "add" | "remove" },
    signal?: AbortSignal,
  ): Promise<"patched" | "gone">;
}

/** An informer of the VolumeSnapshots that carry the source-protection finalizer. */
export interface SnapshotCache {
  list(): VolumeSnapshot[];
  hasSynced(): boolean;
  /** Lists and watches until `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
}

/** What the orphan sweep asks of the API server. */
export interface SweepApi {
  /** Whether VolumeSnapshots are served (asked again while they are not). */
  snapshotsServed(): Promise<boolean>;
  /** Whether the agent may list VolumeSnapshots (the sweep stays off when not). */
  mayListSnapshots(signal?: AbortSignal): Promise<boolean>;
  changeSnapshotFinalizer(
    ref: { namespace: string; name: string },
    change: {
      finalizer: string;
      action: "add" | "remove";
      current?: VolumeSnapshot;
      /** Writes in all; 1: a conflict ends the attempt. */
      tries?: number;
    },
    signal?: AbortSignal,
  ): Promise<"changed" | "unchanged" | "gone" | "forbidden" | "conflict">;
}
