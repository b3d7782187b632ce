/**
 * The ControllerExpandVolumeRequest of a PV, as external-resizer's csiResizer
 * builds it: the volume handle, the required bytes, the controller-expand
 * secret's data, and one volume capability for all of the PV's access modes
 * (csi-lib-utils accessmodes.ToCSIAccessMode; fs_type and mount flags from
 * the PV).
 */
import type {
  AccessModeName,
  ControllerExpandVolumeRequest,
  VolumeCapability,
} from "../csi/types.ts";
import type { PersistentVolume } from "../model/objects.ts";

/** The one access mode of a PV's modes together, or the error upstream gives. */
export function accessModeOf(
  modes: readonly string[],
  singleNodeMultiWriter: boolean,
): { ok: true; mode: AccessModeName } | { ok: false; error: string } {
  const m = new Set(modes);
  if (m.has("ReadWriteOncePod")) {
    if (m.size > 1) {
      return {
        ok: false,
        error:
          "Kubernetes does not support use of ReadWriteOncePod with other access modes on the same PersistentVolume",
      };
    }
    return {
      ok: true,
      mode: singleNodeMultiWriter ? "SINGLE_NODE_SINGLE_WRITER" : "SINGLE_NODE_WRITER",
    };
  }
  if (m.has("ReadWriteMany")) return { ok: true, mode: "MULTI_NODE_MULTI_WRITER" };
  if (m.has("ReadOnlyMany") && m.has("ReadWriteOnce")) {
    return {
      ok: false,
      error: "CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume",
    };
  }
  if (m.has("ReadOnlyMany")) return { ok: true, mode: "MULTI_NODE_READER_ONLY" };
  if (m.has("ReadWriteOnce")) {
    return {
      ok: true,
      mode: singleNodeMultiWriter ? "SINGLE_NODE_MULTI_WRITER" : "SINGLE_NODE_WRITER",
    };
  }
  return { ok: false, error: `unsupported AccessMode combination: [${modes.join(" ")}]` };
}

/** The request, or why none can be made (upstream's words). */
export function expandRequest(
  pv: PersistentVolume,
  options: { bytes: bigint; secrets: Record<string, string>; singleNodeMultiWriter: boolean },
): { ok: true; request: ControllerExpandVolumeRequest } | { ok: false; error: string } {
  const csi = pv.spec.csi;
  if (csi === undefined) {
    return { ok: false, error: `volume ${pv.metadata.name} is not migrated to CSI` };
  }
  if (csi.volumeHandle === "") return { ok: false, error: "empty volume handle" };
  const access = accessModeOf(pv.spec.accessModes ?? [], options.singleNodeMultiWriter);
  if (!access.ok) {
    return {
      ok: false,
      error: `failed to get capabilities of volume ${pv.metadata.name} with ${access.error}`,
    };
  }
  const capability: VolumeCapability = pv.spec.volumeMode === "Block"
    ? { block: {}, access_mode: { mode: access.mode } }
    : {
      mount: { fs_type: csi.fsType ?? "", mount_flags: [...(pv.spec.mountOptions ?? [])] },
      access_mode: { mode: access.mode },
    };
  return {
    ok: true,
    request: {
      volume_id: csi.volumeHandle,
      capacity_range: { required_bytes: options.bytes.toString() },
      secrets: options.secrets,
      volume_capability: capability,
    },
  };
}
