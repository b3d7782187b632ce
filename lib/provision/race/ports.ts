/**
 * What the Immediate binding race needs from the world and how it is set
 * up: narrow ports (the claim patch, GetCapacity, every node's published
 * capacity, the reads of a claim's data source), its metrics, and the
 * flags it reads. main.ts passes the real adapters through start.ts; unit
 * tests pass small fakes.
 */
import type { Logger } from "../../log/logger.ts";
import type { Claim, StorageClass } from "../../model/objects.ts";
import type { PublishedCapacity } from "../../model/storage_capacity.ts";
import type { Clock } from "../../queue/clock.ts";
import type { HandleOutcome } from "../../queue/work/workers.ts";
import type { EventRecorder, Lookup } from "../ports.ts";
import type { GetCapacityCsi } from "./get_capacity.ts";
import type { ProvisionOptions } from "../request/request.ts";
import type { SourceReads } from "../source/load.ts";

/** The claim write of the race. */
export interface RaceApi {
  /** Sets selected-node with the claim's resourceVersion as a precondition. */
  selectNode(
    claim: Claim,
    nodeName: string,
    signal?: AbortSignal,
  ): Promise<"selected" | "conflict" | "gone">;
}

/** Every node's CSIStorageCapacity objects of the driver (with --enable-capacity). */
export interface PublishedCapacities {
  forClass(storageClassName: string): PublishedCapacity[];
}

/** Why this node did not try to own a claim on its turn. */
export type DeclineReason =
  /** The class's allowedTopologies exclude this node. */
  | "topology"
  /** The claim restores or clones a volume that another node holds. */
  | "source"
  /** This node's own published capacity is below the request (no GetCapacity asked). */
  | "published-capacity"
  /** GetCapacity: no topology of this node has room. */
  | "capacity"
  /** GetCapacity did not answer within --timeout, or the driver was unavailable. */
  | "capacity-check-failed";

/** How a patch of selected-node ended. */
export type AttemptResult = "selected" | "conflict" | "gone" | "error";

/** csi_node_provisioner_immediate_binding_* (metrics.ts). */
export interface RaceMetrics {
  /** Claims the race tracks now. */
  racing(count: number): void;
  declined(reason: DeclineReason): void;
  attempted(result: AttemptResult): void;
}

/** What the race is given. */
export interface RaceDeps {
  /** The claim cache: the last look before the patch. */
  claims: Lookup<Claim>;
  api: RaceApi;
  csi: GetCapacityCsi;
  /** With --enable-capacity. */
  capacities?: PublishedCapacities;
  /** Where a claim's snapshot or clone source is read, once per race. */
  sources: SourceReads;
  events: EventRecorder;
  metrics: RaceMetrics;
  /** Puts a claim key back on the claim queue (its turn has come). */
  enqueue(key: string): void;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
}

/** The flags and driver facts the race reads. */
export interface RaceOptions {
  nodeName: string;
  /** --node-deployment-base-delay. */
  baseDelayMs: number;
  /** --node-deployment-max-delay. */
  maxDelayMs: number;
  /** --timeout: the bound of the GetCapacity call. */
  timeoutMs: number;
  /** prepareProvision's options: GetCapacity is asked for the request it builds. */
  prepare: ProvisionOptions;
  /** The driver has GET_CAPACITY. */
  getCapacity: boolean;
  /** This node's managed-by label value, when it publishes capacity (--enable-capacity). */
  publisher?: string;
  /** How often a claim nobody can take is reported again; default one hour. */
  reportEveryMs?: number;
}

/** The race as the provisioning controller uses it (ownership_race.ts OwnershipRace). */
export interface ClaimRace {
  /** An Immediate claim with no node selected, as the claim queue hands it over. */
  consider(
    target: { key: string; claim: Claim; storageClass: StorageClass },
    signal: AbortSignal,
  ): Promise<HandleOutcome>;
  /** This node owned the claim and got ResourceExhausted: it goes back to the race. */
  released(uid: string): void;
  /** CreateVolume created the claim's volume: the driver's capacity now counts it. */
  answered(key: string, uid: string): void;
}
