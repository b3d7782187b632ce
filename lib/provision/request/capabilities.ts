/**
 * CreateVolumeRequest.volume_capabilities: one capability per access mode of
 * the claim (`getVolumeCapabilities` upstream), with the access-mode mapping
 * of csi-lib-utils' accessmodes.ToCSIAccessMode applied to each mode alone.
 */
import type { AccessModeName, VolumeCapability } from "../../csi/types.ts";

/** Capabilities, or the error for an access mode CSI cannot express. */
type CapabilitiesResult =
  | { ok: true; value: VolumeCapability[] }
  | { ok: false; mode: string; error: string };

/** What shapes the capabilities besides the claim's access modes. */
interface CapabilityOptions {
  /** "Block" gives block access; anything else (or absent) a mount. */
  volumeMode: string | undefined;
  /** Mount fs_type (ignored for block volumes, as upstream does). */
  fsType: string;
  /** Mount flags: StorageClass.mountOptions. */
  mountOptions: readonly string[] | undefined;
  /** Whether the driver reports the SINGLE_NODE_MULTI_WRITER controller capability. */
  singleNodeMultiWriter: boolean;
}

const PLAIN: Readonly<Record<string, AccessModeName>> = {
  ReadWriteOnce: "SINGLE_NODE_WRITER",
  ReadWriteOncePod: "SINGLE_NODE_WRITER",
  ReadOnlyMany: "MULTI_NODE_READER_ONLY",
  ReadWriteMany: "MULTI_NODE_MULTI_WRITER",
};

const WITH_SINGLE_NODE_MULTI_WRITER: Readonly<Record<string, AccessModeName>> = {
  ReadWriteOnce: "SINGLE_NODE_MULTI_WRITER",
  ReadWriteOncePod: "SINGLE_NODE_SINGLE_WRITER",
  ReadOnlyMany: "MULTI_NODE_READER_ONLY",
  ReadWriteMany: "MULTI_NODE_MULTI_WRITER",
};

/** The CSI access mode of one Kubernetes access mode, or undefined for an unknown one. */
export function toCsiAccessMode(
  mode: string,
  options: { singleNodeMultiWriter: boolean },
): AccessModeName | undefined {
  const table = options.singleNodeMultiWriter ? WITH_SINGLE_NODE_MULTI_WRITER : PLAIN;
  return Object.hasOwn(table, mode) ? table[mode] : undefined;
}

/** One VolumeCapability per access mode, in the claim's order. */
export function volumeCapabilities(
  accessModes: readonly string[],
  options: CapabilityOptions,
): CapabilitiesResult {
  const capabilities: VolumeCapability[] = [];
  for (const mode of accessModes) {
    const csiMode = toCsiAccessMode(mode, options);
    if (csiMode === undefined) {
      return { ok: false, mode, error: `unsupported AccessMode combination: [${mode}]` };
    }
    capabilities.push(
      options.volumeMode === "Block" ? { block: {}, access_mode: { mode: csiMode } } : {
        mount: { fs_type: options.fsType, mount_flags: [...(options.mountOptions ?? [])] },
        access_mode: { mode: csiMode },
      },
    );
  }
  return { ok: true, value: capabilities };
}
