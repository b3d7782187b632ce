/**
 * Pools and volumes as plain data: allocation by kind the way the upstream
 * hostpath driver's --capacity kind=size works, CreateVolume idempotency by
 * name, and capacity answers. No I/O; the driver persists what it exposes.
 */
import { status } from "@grpc/grpc-js";
import { CsiError } from "./csi_error.ts";
import type { PoolStatus, VolumeRecord } from "./types.ts";

export interface PoolSpec {
  kind: string;
  sizeBytes: number;
  maxVolumeSizeBytes: number | null;
}

export interface AllocationRequest {
  name: string;
  requiredBytes: number;
  /** null when the request set no upper limit. */
  limitBytes: number | null;
  parameters: Record<string, string>;
  mutableParameters: Record<string, string>;
  createdAt: Date;
  newId: () => string;
}

export interface Allocation {
  volume: VolumeRecord;
  /** false when an existing volume of that name was returned. */
  created: boolean;
}

export interface CapacityAnswer {
  availableBytes: number;
  maximumVolumeSizeBytes: number;
}

/** The StorageClass parameter that selects a pool. */
export const KIND_PARAMETER = "kind";

export class VolumeStore {
  readonly #pools = new Map<string, PoolSpec>();
  readonly #used = new Map<string, number>();
  readonly #byId = new Map<string, VolumeRecord>();
  readonly #byName = new Map<string, VolumeRecord>();

  constructor(pools: readonly PoolSpec[], volumes: readonly VolumeRecord[] = []) {
    for (const pool of pools) this.#pools.set(pool.kind, { ...pool });
    for (const volume of volumes) this.#add(volume);
  }

  pools(): PoolStatus[] {
    return [...this.#pools.values()].map((pool) => this.#status(pool));
  }

  volumes(): VolumeRecord[] {
    return [...this.#byId.values()].map((volume) => structuredClone(volume));
  }

  /** Sets a pool's size (and optionally its per-volume limit); unknown kinds throw. */
  resizePool(kind: string, sizeBytes: number, maxVolumeSizeBytes?: number | null): PoolStatus {
    const pool = this.#pools.get(kind);
    if (pool === undefined) throw new RangeError(`no pool of kind "${kind}"`);
    pool.sizeBytes = sizeBytes;
    if (maxVolumeSizeBytes !== undefined) pool.maxVolumeSizeBytes = maxVolumeSizeBytes;
    return this.#status(pool);
  }

  /**
   * Returns the volume of that name if it fits the request, else allocates
   * one from the pool named by parameters.kind, or from the first pool with
   * room when there is no kind.
   */
  allocate(request: AllocationRequest): Allocation {
    const kind = request.parameters[KIND_PARAMETER];
    const existing = this.#byName.get(request.name);
    if (existing !== undefined) return { volume: this.#reuse(existing, request), created: false };
    const pool = kind === undefined ? this.#firstPoolWithRoom(request) : this.#namedPool(kind);
    this.#checkRoom(pool, request.requiredBytes);
    const volume: VolumeRecord = {
      id: request.newId(),
      name: request.name,
      kind: pool.kind,
      sizeBytes: request.requiredBytes,
      parameters: { ...request.parameters },
      mutableParameters: { ...request.mutableParameters },
      createdAt: request.createdAt.toISOString(),
    };
    this.#add(volume);
    return { volume: structuredClone(volume), created: true };
  }

  /** Removes a volume; undefined when there was none with that id. */
  remove(id: string): VolumeRecord | undefined {
    const volume = this.#byId.get(id);
    if (volume === undefined) return undefined;
    this.#byId.delete(id);
    this.#byName.delete(volume.name);
    this.#used.set(volume.kind, (this.#used.get(volume.kind) ?? 0) - volume.sizeBytes);
    return volume;
  }

  /** An unknown kind has nothing; no kind means all pools together. */
  capacity(kind: string | undefined): CapacityAnswer {
    if (kind !== undefined) {
      const pool = this.#pools.get(kind);
      if (pool === undefined) return { availableBytes: 0, maximumVolumeSizeBytes: 0 };
      const status = this.#status(pool);
      return {
        availableBytes: status.availableBytes,
        maximumVolumeSizeBytes: largestVolume(status),
      };
    }
    const all = this.pools();
    return {
      availableBytes: all.reduce((sum, pool) => sum + pool.availableBytes, 0),
      maximumVolumeSizeBytes: Math.max(0, ...all.map(largestVolume)),
    };
  }

  #add(volume: VolumeRecord): void {
    this.#byId.set(volume.id, volume);
    this.#byName.set(volume.name, volume);
    this.#used.set(volume.kind, (this.#used.get(volume.kind) ?? 0) + volume.sizeBytes);
  }

  #status(pool: PoolSpec): PoolStatus {
    const usedBytes = this.#used.get(pool.kind) ?? 0;
    return {
      kind: pool.kind,
      sizeBytes: pool.sizeBytes,
      usedBytes,
      availableBytes: Math.max(0, pool.sizeBytes - usedBytes),
      maxVolumeSizeBytes: pool.maxVolumeSizeBytes,
    };
  }

  #reuse(existing: VolumeRecord, request: AllocationRequest): VolumeRecord {
    const wantedKind = request.parameters[KIND_PARAMETER];
    const fits = existing.sizeBytes >= request.requiredBytes &&
      (request.limitBytes === null || existing.sizeBytes <= request.limitBytes);
    if (existing.parameters[KIND_PARAMETER] !== wantedKind || !fits) {
      throw new CsiError(
        status.ALREADY_EXISTS,
        `volume "${request.name}" exists with kind "${existing.kind}" and ${existing.sizeBytes} bytes, ` +
          `incompatible with kind ${wantedKind === undefined ? "(none)" : `"${wantedKind}"`}, ` +
          `${request.requiredBytes} bytes required` +
          (request.limitBytes === null ? "" : `, ${request.limitBytes} bytes limit`),
      );
    }
    return structuredClone(existing);
  }

  #namedPool(kind: string): PoolSpec {
    const pool = this.#pools.get(kind);
    if (pool !== undefined) return pool;
    const known = [...this.#pools.keys()].map((k) => `"${k}"`).join(", ");
    throw new CsiError(
      status.INVALID_ARGUMENT,
      `unknown kind "${kind}" in parameters; this driver has pools ${known}`,
    );
  }

  #firstPoolWithRoom(request: AllocationRequest): PoolSpec {
    for (const pool of this.#pools.values()) {
      if (roomFor(this.#status(pool), request.requiredBytes)) return pool;
    }
    const pools = this.pools().map((pool) => `"${pool.kind}" ${describeRoom(pool)}`).join("; ");
    throw new CsiError(
      status.RESOURCE_EXHAUSTED,
      `no pool has room for ${request.requiredBytes} bytes: ${pools}`,
    );
  }

  #checkRoom(pool: PoolSpec, requiredBytes: number): void {
    const current = this.#status(pool);
    if (roomFor(current, requiredBytes)) return;
    throw new CsiError(
      status.RESOURCE_EXHAUSTED,
      `pool "${pool.kind}" cannot hold ${requiredBytes} bytes: ${describeRoom(current)}`,
    );
  }
}

function roomFor(pool: PoolStatus, requiredBytes: number): boolean {
  return requiredBytes <= pool.availableBytes &&
    (pool.maxVolumeSizeBytes === null || requiredBytes <= pool.maxVolumeSizeBytes);
}

function describeRoom(pool: PoolStatus): string {
  const limit = pool.maxVolumeSizeBytes === null
    ? ""
    : `, at most ${pool.maxVolumeSizeBytes} bytes per volume`;
  return `${pool.availableBytes} bytes available of ${pool.sizeBytes}${limit}`;
}

/** As upstream hostpath: the per-volume limit, but never more than what is left. */
function largestVolume(pool: PoolStatus): number {
  return pool.maxVolumeSizeBytes === null
    ? pool.availableBytes
    : Math.min(pool.maxVolumeSizeBytes, pool.availableBytes);
}
