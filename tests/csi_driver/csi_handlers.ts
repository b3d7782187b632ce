/**
 * What each CSI method really does, before and apart from fault injection:
 * plain functions from a decoded request to a response, throwing CsiError
 * for a gRPC error status.
 */
import { status } from "@grpc/grpc-js";
import { randomUUID } from "node:crypto";
import type {
  CreateVolumeRequest,
  CreateVolumeResponse,
  DeleteVolumeRequest,
  GetCapacityRequest,
  GetCapacityResponse,
  NodeGetInfoResponse,
  ProbeResponse,
  Segments,
  Topology,
  VolumeCapability,
} from "../../lib/csi/types.ts";
import type { DriverConfig } from "./config.ts";
import { CsiError } from "./csi_error.ts";
import type { CallPlan } from "./faults.ts";
import { MiB } from "./quantity.ts";
import type { CsiMethod } from "./types.ts";
import { KIND_PARAMETER, type VolumeStore } from "./volume_store.ts";

/** The size of a volume whose request asks for no particular size. */
export const DEFAULT_VOLUME_BYTES = MiB;

export interface CsiBackend {
  config: DriverConfig;
  store: VolumeStore;
  /** Saves the volumes after a change; throws if it cannot. */
  persist(): void;
}

export type CsiHandler = (request: never, plan: CallPlan) => unknown;

export function csiHandlers(backend: CsiBackend): Record<CsiMethod, CsiHandler> {
  const { config } = backend;
  const segments: Segments = { [config.topologyKey]: config.nodeId };
  return {
    GetPluginInfo: () => ({
      name: config.driverName,
      vendor_version: config.vendorVersion,
      manifest: {},
    }),
    GetPluginCapabilities: () => ({
      capabilities: config.pluginCapabilities.map((type) => ({ service: { type } })),
    }),
    Probe: (_request: unknown, plan: CallPlan): ProbeResponse => ({
      ready: plan.ready === "absent" ? null : { value: plan.ready !== "false" },
    }),
    CreateVolume: (request: CreateVolumeRequest) => createVolume(backend, request, segments),
    DeleteVolume: (request: DeleteVolumeRequest) => {
      if (request.volume_id === "") {
        throw new CsiError(status.INVALID_ARGUMENT, "volume_id is required");
      }
      if (backend.store.remove(request.volume_id) !== undefined) backend.persist();
      return {};
    },
    GetCapacity: (request: GetCapacityRequest): GetCapacityResponse => {
      const topology = request.accessible_topology;
      const here = topology === null || topology === undefined || matches(topology, segments);
      const answer = backend.store.capacity(request.parameters[KIND_PARAMETER]);
      return {
        available_capacity: String(here ? answer.availableBytes : 0),
        maximum_volume_size: { value: String(here ? answer.maximumVolumeSizeBytes : 0) },
        minimum_volume_size: { value: "0" },
      };
    },
    ControllerGetCapabilities: () => ({
      capabilities: config.controllerCapabilities.map((type) => ({ rpc: { type } })),
    }),
    NodeGetInfo: (): NodeGetInfoResponse => ({
      node_id: config.nodeId,
      max_volumes_per_node: "0",
      accessible_topology: { segments },
    }),
  };
}

function createVolume(
  backend: CsiBackend,
  request: CreateVolumeRequest,
  segments: Segments,
): CreateVolumeResponse {
  if (request.name === "") throw new CsiError(status.INVALID_ARGUMENT, "name is required");
  checkCapabilities(request.volume_capabilities, backend.config);
  if (request.volume_content_source !== null && request.volume_content_source !== undefined) {
    throw new CsiError(status.INVALID_ARGUMENT, "content sources not supported by the test driver");
  }
  const mutableParameters = request.mutable_parameters ?? {};
  if (
    Object.keys(mutableParameters).length > 0 &&
    !backend.config.controllerCapabilities.includes("MODIFY_VOLUME")
  ) {
    throw new CsiError(
      status.INVALID_ARGUMENT,
      "mutable_parameters need the MODIFY_VOLUME capability",
    );
  }
  const requisite = request.accessibility_requirements?.requisite ?? [];
  if (requisite.length > 0 && !requisite.some((topology) => matches(topology, segments))) {
    throw new CsiError(
      status.RESOURCE_EXHAUSTED,
      `requisite topology ${JSON.stringify(requisite)} does not include this node ${
        JSON.stringify(segments)
      }`,
    );
  }
  const { requiredBytes, limitBytes } = volumeSize(request.capacity_range);
  const { volume, created } = backend.store.allocate({
    name: request.name,
    requiredBytes,
    limitBytes,
    parameters: request.parameters,
    mutableParameters,
    createdAt: new Date(),
    newId: backend.config.volumeIds === "name" ? () => request.name : randomUUID,
  });
  if (created) backend.persist();
  return {
    volume: {
      capacity_bytes: String(volume.sizeBytes),
      volume_id: volume.id,
      volume_context: { ...volume.parameters, kind: volume.kind, nodeID: backend.config.nodeId },
      content_source: null,
      accessible_topology: [{ segments }],
    },
  };
}

function checkCapabilities(capabilities: readonly VolumeCapability[], config: DriverConfig): void {
  if (capabilities.length === 0) {
    throw new CsiError(status.INVALID_ARGUMENT, "volume_capabilities are required");
  }
  for (const capability of capabilities) {
    const mode = capability.access_mode?.mode;
    if (mode === undefined || mode === "UNKNOWN") {
      throw new CsiError(status.INVALID_ARGUMENT, "every volume capability needs an access mode");
    }
    if (capability.access_type === undefined && !capability.block && !capability.mount) {
      throw new CsiError(status.INVALID_ARGUMENT, "every volume capability needs block or mount");
    }
    const singleNodeMode = mode === "SINGLE_NODE_SINGLE_WRITER" ||
      mode === "SINGLE_NODE_MULTI_WRITER";
    if (singleNodeMode && !config.controllerCapabilities.includes("SINGLE_NODE_MULTI_WRITER")) {
      throw new CsiError(
        status.INVALID_ARGUMENT,
        `access mode ${mode} needs the SINGLE_NODE_MULTI_WRITER controller capability`,
      );
    }
  }
}

/**
 * The bytes to allocate: required_bytes, or DEFAULT_VOLUME_BYTES (capped by
 * the limit) when the request names none.
 */
export function volumeSize(
  range: CreateVolumeRequest["capacity_range"],
): { requiredBytes: number; limitBytes: number | null } {
  const required = toBigInt(range?.required_bytes, "required_bytes");
  const limit = toBigInt(range?.limit_bytes, "limit_bytes");
  if (limit > 0n && limit < required) {
    throw new CsiError(
      status.OUT_OF_RANGE,
      `limit_bytes ${limit} is less than required_bytes ${required}`,
    );
  }
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  if (required > max) {
    throw new CsiError(
      status.RESOURCE_EXHAUSTED,
      `required_bytes ${required} is more than any pool holds`,
    );
  }
  const limitBytes = limit > 0n ? Number(limit > max ? max : limit) : null;
  const defaultBytes = limitBytes === null
    ? DEFAULT_VOLUME_BYTES
    : Math.min(DEFAULT_VOLUME_BYTES, limitBytes);
  return { requiredBytes: required === 0n ? defaultBytes : Number(required), limitBytes };
}

function toBigInt(value: string | undefined, field: string): bigint {
  const parsed = BigInt(value === undefined || value === "" ? "0" : value);
  if (parsed < 0n) throw new CsiError(status.INVALID_ARGUMENT, `${field} must not be negative`);
  return parsed;
}

/** A topology matches when each segment it names has this node's value (an empty one matches). */
function matches(topology: Topology, segments: Segments): boolean {
  return Object.entries(topology.segments ?? {}).every(([key, value]) => segments[key] === value);
}
