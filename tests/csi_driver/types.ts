/**
 * The test CSI driver's public data shapes: what the control endpoint serves
 * and accepts, and the interface shared by the in-process control and the
 * HTTP client (DriverControl), so a test reads the same either way.
 * Sizes are bytes as plain numbers: pools are capped at 2^53-1 bytes (8 PiB).
 */

/** The CSI methods the driver serves, named as in proto/csi.proto. */
export type CsiMethod =
  | "GetPluginInfo"
  | "GetPluginCapabilities"
  | "Probe"
  | "CreateVolume"
  | "DeleteVolume"
  | "GetCapacity"
  | "ControllerGetCapabilities"
  | "NodeGetInfo";

export const CSI_METHODS: readonly CsiMethod[] = [
  "GetPluginInfo",
  "GetPluginCapabilities",
  "Probe",
  "CreateVolume",
  "DeleteVolume",
  "GetCapacity",
  "ControllerGetCapabilities",
  "NodeGetInfo",
];

/** A volume the driver has created and not yet deleted. */
export interface VolumeRecord {
  id: string;
  name: string;
  /** The pool it was allocated from. */
  kind: string;
  sizeBytes: number;
  /** The CreateVolume parameters, as received. */
  parameters: Record<string, string>;
  /** The CreateVolume mutable_parameters (VolumeAttributesClass), as received. */
  mutableParameters: Record<string, string>;
  /** ISO 8601. */
  createdAt: string;
}

/** One pool's accounting; used is the sum of its volumes' sizes. */
export interface PoolStatus {
  kind: string;
  sizeBytes: number;
  usedBytes: number;
  /** max(0, size - used): a pool shrunk below its use has none left. */
  availableBytes: number;
  /** null when the pool has no per-volume limit. */
  maxVolumeSizeBytes: number | null;
}

/** One CSI call as the driver saw it. */
export interface CallRecord {
  /** Sequence number, increasing over the driver's life (survives clearCalls). */
  seq: number;
  method: CsiMethod;
  /** When the call arrived, ISO 8601. */
  time: string;
  /** The request with every `secrets` value replaced by "***stripped***". */
  request: unknown;
  /** The keys of the request's `secrets` map, sorted; empty when none were sent. */
  secretKeys: string[];
  /** gRPC status code (0 = OK); null while the call is still running. */
  code: number | null;
  /** Its name, e.g. "OK", "RESOURCE_EXHAUSTED"; null while running. */
  codeName: string | null;
  /** The error message, "" on success or while running. */
  message: string;
  /** null while running. */
  durationMs: number | null;
}

/**
 * A fault for one method. Each field given replaces that part of the method's
 * fault; fields left out keep what was set before.
 */
export interface FaultSpec {
  method: CsiMethod;
  /** gRPC status code, as a number or a name ("RESOURCE_EXHAUSTED", "ResourceExhausted"). */
  code?: number | string;
  message?: string;
  /** How many calls code, hang and notReady apply to; 0 or absent = every call until cleared. */
  times?: number;
  /** Added before every call until cleared. */
  latencyMs?: number;
  /** Never answer until the faults are cleared or the client gives up. */
  hang?: boolean;
  /** Probe only: answer ready=false. */
  notReady?: boolean;
  /** Probe only: answer without the ready field (which means ready, per the CSI spec). */
  omitReady?: boolean;
  /** With code: do the real work first, then fail (the answer was "lost"). */
  after?: boolean;
  /**
   * The work is done, then its answer is lost: the call hangs (until the
   * faults are cleared, then answers), fails with `code` (default
   * UNAVAILABLE), or its connection is cut. The work is done even when the
   * caller gives up or dies before it is (how upstream external-provisioner
   * leaks a volume: it is made for a caller that is gone). Counted by `times` like a code.
   */
  lostAnswer?: LostAnswer;
  /** With latencyMs: each call waits a random time in [latencyMs, latencyMaxMs]. */
  latencyMaxMs?: number;
  /** Each counted fault fires for a call with this probability (0 < p <= 1, default 1). */
  probability?: number;
}

/** How an answer is lost once the work is done. */
export type LostAnswer = "hang" | "fail" | "cut";

/** What is armed for one method right now. */
export interface FaultState {
  method: CsiMethod;
  latencyMs: number;
  /** remaining: calls left, null = every call. */
  error: { code: number; message: string; after: boolean; remaining: number | null } | null;
  hang: { remaining: number | null } | null;
  notReady: { remaining: number | null } | null;
  omitReady: { remaining: number | null } | null;
  /** The answer after the work: lost this way. */
  lost: { mode: LostAnswer; remaining: number | null } | null;
  latencyMaxMs: number;
  probability: number;
}

/** Steers a running driver; the in-process control and DriverControl both implement it. */
export interface DriverControlApi {
  volumes(): Promise<VolumeRecord[]>;
  calls(method?: CsiMethod): Promise<CallRecord[]>;
  clearCalls(): Promise<void>;
  pools(): Promise<PoolStatus[]>;
  faults(): Promise<FaultState[]>;
  setFault(fault: FaultSpec): Promise<void>;
  clearFaults(method?: CsiMethod): Promise<void>;
  /**
   * Changes a pool's size at run time (bytes or a quantity such as "5Gi");
   * maxVolumeSize null removes the per-volume limit. Unknown kinds are an error.
   */
  resizePool(
    kind: string,
    size: number | string,
    options?: { maxVolumeSize?: number | string | null },
  ): Promise<PoolStatus>;
}
