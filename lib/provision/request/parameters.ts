/**
 * StorageClass parameters on their way into CreateVolumeRequest.parameters:
 * the keys reserved under `csi.storage.k8s.io/` are for the provisioner and
 * are stripped (`removePrefixedParameters`), fsType is taken out of them, and
 * --extra-create-metadata adds the claim and PV names.
 */
import { CSI_PARAMETER_PREFIX } from "../../model/keys.ts";

/** The current fsType key. */
export const PREFIXED_FSTYPE_KEY = "csi.storage.k8s.io/fstype";

/** Added by --extra-create-metadata. */
const PVC_NAME_KEY = "csi.storage.k8s.io/pvc/name";
const PVC_NAMESPACE_KEY = "csi.storage.k8s.io/pvc/namespace";
const PV_NAME_KEY = "csi.storage.k8s.io/pv/name";

/** The reserved keys upstream knows and strips; any other `csi.storage.k8s.io/` key is an error. */
export const RESERVED_PARAMETER_KEYS: readonly string[] = [
  "fstype",
  "secret-name",
  "secret-namespace",
  "provisioner-secret-name",
  "provisioner-secret-namespace",
  "controller-publish-secret-name",
  "controller-publish-secret-namespace",
  "node-stage-secret-name",
  "node-stage-secret-namespace",
  "node-publish-secret-name",
  "node-publish-secret-namespace",
  "controller-expand-secret-name",
  "controller-expand-secret-namespace",
  "node-expand-secret-name",
  "node-expand-secret-namespace",
  "controller-modify-secret-name",
  "controller-modify-secret-namespace",
].map((key) => CSI_PARAMETER_PREFIX + key);

/** Parameters for the driver, or the first unknown reserved key. */
type StripResult =
  | { ok: true; value: Record<string, string> }
  | { ok: false; key: string; error: string };

/**
 * Removes the reserved keys. Deprecated keys (`csiProvisionerSecretName`,
 * `fstype`, …) are not reserved and stay, as upstream keeps them for
 * backwards compatibility. The error text is upstream's, wrapped as
 * prepareProvision wraps it.
 */
export function stripReservedParameters(parameters: Record<string, string> = {}): StripResult {
  const kept: Record<string, string> = {};
  // Upstream walks a Go map and reports whichever unknown key comes first;
  // sorting makes the reported key deterministic.
  for (const key of Object.keys(parameters).sort()) {
    if (!key.startsWith(CSI_PARAMETER_PREFIX)) {
      kept[key] = parameters[key] ?? "";
      continue;
    }
    if (!RESERVED_PARAMETER_KEYS.includes(key)) {
      return {
        ok: false,
        key,
        error: "failed to strip CSI Parameters of prefixed keys: found unknown parameter key " +
          `"${key}" with reserved namespace ${CSI_PARAMETER_PREFIX}`,
      };
    }
  }
  return { ok: true, value: kept };
}

/** The filesystem type for mount volumes, or why the class is ambiguous. */
type FsTypeResult =
  | {
    ok: true;
    value: string;
    /** The deprecated key (`fstype` in any case) the value came from, for a warning. */
    deprecatedKey: string | undefined;
  }
  | { ok: false; keys: string[]; error: string };

/**
 * fsType from `csi.storage.k8s.io/fstype` or the deprecated `fstype` (any
 * case); both present is an error; neither (or an empty value) falls back to
 * --default-fstype, else "".
 */
export function resolveFsType(
  parameters: Record<string, string> = {},
  options: { defaultFstype: string },
): FsTypeResult {
  const keys = Object.keys(parameters).sort().filter((key) =>
    key.toLowerCase() === "fstype" || key === PREFIXED_FSTYPE_KEY
  );
  if (keys.length > 1) {
    return {
      ok: false,
      keys,
      error: `fstype specified in parameters with both "fstype" and "${PREFIXED_FSTYPE_KEY}" keys`,
    };
  }
  const key = keys[0];
  const value = key === undefined ? "" : parameters[key] ?? "";
  return {
    ok: true,
    value: value === "" ? options.defaultFstype : value,
    deprecatedKey: key !== undefined && key !== PREFIXED_FSTYPE_KEY ? key : undefined,
  };
}

/** The --extra-create-metadata parameters added to the stripped ones. */
export function withExtraCreateMetadata(
  parameters: Record<string, string>,
  names: { claimName: string; claimNamespace: string; volumeName: string },
): Record<string, string> {
  return {
    ...parameters,
    [PVC_NAME_KEY]: names.claimName,
    [PVC_NAMESPACE_KEY]: names.claimNamespace,
    [PV_NAME_KEY]: names.volumeName,
  };
}
