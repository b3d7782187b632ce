/**
 * The name shared by the CSI volume (CreateVolumeRequest.name) and its
 * PersistentVolume: `makeVolumeName` in external-provisioner's controller.go.
 */

/** A name, or the reason there is none. */
type VolumeNameResult = { ok: true; value: string } | { ok: false; error: string };

/** The two settings that shape the name (flags --volume-name-prefix and --volume-name-uuid-length). */
interface VolumeNameOptions {
  /** --volume-name-prefix, "pvc" by default. */
  prefix: string;
  /** --volume-name-uuid-length: -1 keeps the whole UID, N keeps the first N dashless characters. */
  uuidLength: number;
}

/**
 * `<prefix>-<claim UID>`, or with a UUID length N, `<prefix>-` plus the first
 * N characters of the UID without its dashes.
 */
export function makeVolumeName(claimUid: string, options: VolumeNameOptions): VolumeNameResult {
  if (options.prefix.length === 0) {
    return { ok: false, error: "volume name prefix cannot be of length 0" };
  }
  if (claimUid.length === 0) {
    return { ok: false, error: "corrupted PVC object, it is missing UID" };
  }
  if (options.uuidLength === -1) return { ok: true, value: `${options.prefix}-${claimUid}` };
  // Upstream slices [0:N] and panics when N exceeds the dashless UID; we keep
  // the whole dashless UID instead (the config only allows -1 or N >= 1).
  const dashless = claimUid.replaceAll("-", "");
  return { ok: true, value: `${options.prefix}-${dashless.slice(0, options.uuidLength)}` };
}
