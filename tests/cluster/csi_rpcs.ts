/** The RPCs of the CSI spec v1 (csi.proto of container-storage-interface/spec). */

/** Every RPC of CSI spec v1 (csi.proto), by service; the streaming ones are server-streaming. */
export const CSI_RPCS: Record<string, { unary: string[]; serverStreaming?: string[] }> = {
  Identity: { unary: ["GetPluginInfo", "GetPluginCapabilities", "Probe"] },
  Controller: {
    unary: [
      "CreateVolume",
      "DeleteVolume",
      "ControllerPublishVolume",
      "ControllerUnpublishVolume",
      "ValidateVolumeCapabilities",
      "ListVolumes",
      "GetCapacity",
      "ControllerGetCapabilities",
      "CreateSnapshot",
      "DeleteSnapshot",
      "ListSnapshots",
      "GetSnapshot",
      "ControllerExpandVolume",
      "ControllerGetVolume",
      "ControllerModifyVolume",
    ],
  },
  GroupController: {
    unary: [
      "GroupControllerGetCapabilities",
      "CreateVolumeGroupSnapshot",
      "DeleteVolumeGroupSnapshot",
      "GetVolumeGroupSnapshot",
    ],
  },
  Node: {
    unary: [
      "NodeStageVolume",
      "NodeUnstageVolume",
      "NodePublishVolume",
      "NodeUnpublishVolume",
      "NodeGetVolumeStats",
      "NodeExpandVolume",
      "NodeGetCapabilities",
      "NodeGetInfo",
    ],
  },
  SnapshotMetadata: { unary: [], serverStreaming: ["GetMetadataAllocated", "GetMetadataDelta"] },
};
