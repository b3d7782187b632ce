/**
 * CSI messages as plain data, exactly as they travel: field names as in
 * proto/csi.proto (snake_case), int64 values as decimal strings (exact beyond
 * 2^53; convert with BigInt() where arithmetic is needed), enums by name.
 * Decoded messages carry every field: absent scalars as their zero value,
 * absent messages as null.
 */

/** A map of topology keys to values, e.g. `{ "topology.hostpath.csi/node": "node-a" }`. */
export type Segments = Record<string, string>;

export interface Topology {
  segments: Segments;
}

export type PluginServiceType =
  | "UNKNOWN"
  | "CONTROLLER_SERVICE"
  | "VOLUME_ACCESSIBILITY_CONSTRAINTS"
  | "GROUP_CONTROLLER_SERVICE"
  | "SNAPSHOT_METADATA_SERVICE";

export interface PluginCapability {
  service?: { type: PluginServiceType } | null;
  volume_expansion?: { type: "UNKNOWN" | "ONLINE" | "OFFLINE" } | null;
  type?: "service" | "volume_expansion";
}

export type ControllerCapabilityType =
  | "UNKNOWN"
  | "CREATE_DELETE_VOLUME"
  | "PUBLISH_UNPUBLISH_VOLUME"
  | "LIST_VOLUMES"
  | "GET_CAPACITY"
  | "CREATE_DELETE_SNAPSHOT"
  | "LIST_SNAPSHOTS"
  | "CLONE_VOLUME"
  | "PUBLISH_READONLY"
  | "EXPAND_VOLUME"
  | "LIST_VOLUMES_PUBLISHED_NODES"
  | "VOLUME_CONDITION"
  | "GET_VOLUME"
  | "SINGLE_NODE_MULTI_WRITER"
  | "MODIFY_VOLUME";

export interface ControllerServiceCapability {
  rpc?: { type: ControllerCapabilityType } | null;
  type?: "rpc";
}

export interface GetPluginInfoResponse {
  name: string;
  vendor_version: string;
  manifest: Record<string, string>;
}

export interface ProbeResponse {
  /** Absent (null) means ready, per the CSI spec. */
  ready: { value: boolean } | null;
}

export type AccessModeName =
  | "UNKNOWN"
  | "SINGLE_NODE_WRITER"
  | "SINGLE_NODE_READER_ONLY"
  | "MULTI_NODE_READER_ONLY"
  | "MULTI_NODE_SINGLE_WRITER"
  | "MULTI_NODE_MULTI_WRITER"
  | "SINGLE_NODE_SINGLE_WRITER"
  | "SINGLE_NODE_MULTI_WRITER";

export interface VolumeCapability {
  block?: Record<string, never> | null;
  mount?: { fs_type: string; mount_flags: string[]; volume_mount_group?: string } | null;
  access_mode: { mode: AccessModeName } | null;
  access_type?: "block" | "mount";
}

export interface VolumeContentSource {
  snapshot?: { snapshot_id: string } | null;
  volume?: { volume_id: string } | null;
  type?: "snapshot" | "volume";
}

export interface TopologyRequirement {
  requisite: Topology[];
  preferred: Topology[];
}

export interface CreateVolumeRequest {
  name: string;
  capacity_range?: { required_bytes: string; limit_bytes?: string } | null;
  volume_capabilities: VolumeCapability[];
  parameters: Record<string, string>;
  secrets: Record<string, string>;
  volume_content_source?: VolumeContentSource | null;
  accessibility_requirements?: TopologyRequirement | null;
  mutable_parameters?: Record<string, string>;
}

export interface Volume {
  capacity_bytes: string;
  volume_id: string;
  volume_context: Record<string, string>;
  content_source: VolumeContentSource | null;
  accessible_topology: Topology[];
}

export interface ListVolumesRequest {
  max_entries: number;
  starting_token: string;
}

export interface ListVolumesResponse {
  entries: { volume: Volume | null }[];
  next_token: string;
}

export interface ControllerGetVolumeRequest {
  volume_id: string;
}

export interface ControllerGetVolumeResponse {
  volume: Volume | null;
}

export interface CreateVolumeResponse {
  volume: Volume | null;
}

export interface DeleteVolumeRequest {
  volume_id: string;
  secrets: Record<string, string>;
}

export interface ControllerExpandVolumeRequest {
  volume_id: string;
  capacity_range: { required_bytes: string; limit_bytes?: string } | null;
  secrets: Record<string, string>;
  volume_capability: VolumeCapability | null;
}

export interface ControllerExpandVolumeResponse {
  capacity_bytes: string;
  node_expansion_required: boolean;
}

export interface GetCapacityRequest {
  volume_capabilities: VolumeCapability[];
  parameters: Record<string, string>;
  accessible_topology?: Topology | null;
}

export interface GetCapacityResponse {
  available_capacity: string;
  maximum_volume_size: { value: string } | null;
  minimum_volume_size: { value: string } | null;
}

export interface NodeGetInfoResponse {
  node_id: string;
  max_volumes_per_node: string;
  accessible_topology: Topology | null;
}
