/**
 * What the provisioning controller and its attempts share: their
 * dependencies, their options, and how a claim appears in events and metrics.
 */
import type {
  DataSourceApi,
  EventRecorder,
  Journal,
  ProvisionApi,
  ProvisionCaches,
  ProvisionCsi,
  ProvisionLabels,
  ProvisionMetrics,
} from "./ports.ts";
import type { Claim } from "../model/objects.ts";
import type { Logger } from "../log/logger.ts";
import type { ClaimDecisionOptions } from "./decide.ts";
import type { PersistentVolumeOptions } from "./pv/persistent_volume.ts";
import type { PvSaver } from "./pv/saver.ts";
import type { ClaimRace } from "./race/ports.ts";
import type { ProvisionOptions } from "./request/request.ts";

/** What the controller is given. */
export interface ProvisionControllerDeps {
  caches: ProvisionCaches;
  api: ProvisionApi;
  /** Snapshot and clone sources: their reads and protection finalizers. */
  sources: DataSourceApi;
  csi: ProvisionCsi;
  events: EventRecorder;
  metrics: ProvisionMetrics;
  saver: PvSaver;
  /** Intents of CreateVolume calls, on the node's disk. */
  journal: Journal;
  logger: Logger;
  /** The Immediate binding race; without it (--node-deployment-immediate-binding=false) none runs. */
  race?: ClaimRace;
}

/** The flags and driver facts, grouped by the pure function that reads them. */
export interface ProvisionControllerOptions {
  decide: ClaimDecisionOptions;
  prepare: ProvisionOptions;
  persistentVolume: PersistentVolumeOptions;
  /** --timeout: also bounds the whole cleanup of a too-small volume. */
  timeoutMs: number;
  /** How long an infeasible (InvalidArgument) claim waits; upstream: 5 minutes. */
  slowRetryMs?: number;
}

/** Upstream's fixed retention of the infeasible slow set. */
export const DEFAULT_SLOW_RETRY_MS = 5 * 60 * 1000;

export { claimSubject } from "../model/events.ts";

/** Metric labels of a claim. */
export function provisionLabels(claim: Claim, className: string): ProvisionLabels {
  return {
    class: className,
    source: claim.spec.dataSource?.kind ?? claim.spec.dataSourceRef?.kind ?? "",
  };
}
