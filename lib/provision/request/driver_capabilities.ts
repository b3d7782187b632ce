/**
 * The driver capabilities provisioning needs (`checkDriverCapabilities`
 * upstream), checked per claim with upstream's messages and order.
 */
import type { ControllerCapabilityType } from "../../csi/types.ts";

/** What the driver said about itself at start-up. */
export interface DriverCapabilities {
  /** Plugin capability CONTROLLER_SERVICE. */
  controllerService: boolean;
  /** ControllerGetCapabilities. */
  controller: readonly ControllerCapabilityType[];
}

/** What the claim asks for beyond an empty volume. */
interface RequiredCapabilities {
  /** A VolumeSnapshot data source. */
  snapshot: boolean;
  /** A PersistentVolumeClaim data source. */
  clone: boolean;
  /** A VolumeAttributesClass. */
  modifyVolume: boolean;
}

/** A missing capability: upstream's error text, and which requirement it fails. */
interface MissingCapability {
  message: string;
  requirement: "provisioning" | keyof RequiredCapabilities;
}

/** Undefined when the driver can provision the claim, else the first missing capability. */
export function checkDriverCapabilities(
  capabilities: DriverCapabilities,
  required: RequiredCapabilities,
): MissingCapability | undefined {
  const base = "CSI driver does not support dynamic provisioning";
  const has = (capability: ControllerCapabilityType) =>
    capabilities.controller.includes(capability);
  if (!capabilities.controllerService) {
    return {
      message: `${base}: plugin CONTROLLER_SERVICE capability is not reported`,
      requirement: "provisioning",
    };
  }
  if (!has("CREATE_DELETE_VOLUME")) {
    return {
      message: `${base}: controller CREATE_DELETE_VOLUME capability is not reported`,
      requirement: "provisioning",
    };
  }
  if (required.snapshot && !has("CREATE_DELETE_SNAPSHOT")) {
    return {
      message: "CSI driver does not support snapshot restore: " +
        "controller CREATE_DELETE_SNAPSHOT capability is not reported",
      requirement: "snapshot",
    };
  }
  if (required.clone && !has("CLONE_VOLUME")) {
    return {
      message: "CSI driver does not support clone operations: " +
        "controller CLONE_VOLUME capability is not reported",
      requirement: "clone",
    };
  }
  if (required.modifyVolume && !has("MODIFY_VOLUME")) {
    return {
      message: "CSI driver does not support VolumeAttributesClass: " +
        "controller MODIFY_VOLUME capability is not reported",
      requirement: "modifyVolume",
    };
  }
  return undefined;
}
