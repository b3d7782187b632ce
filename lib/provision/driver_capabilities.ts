/**
 * The driver capabilities provisioning needs (`checkDriverCapabilities`
 * upstream), checked per claim with upstream's messages.
 */
import type { ControllerCapabilityType } from "../csi/types.ts";

/** What the driver said about itself at start-up. */
export interface DriverCapabilities {
  /** Plugin capability CONTROLLER_SERVICE. */
  controllerService: boolean;
  /** ControllerGetCapabilities. */
  controller: readonly ControllerCapabilityType[];
}

/**
 * Undefined when the driver can provision the claim, else upstream's error
 * text. `modifyVolume`: the claim names a VolumeAttributesClass.
 */
export function checkDriverCapabilities(
  capabilities: DriverCapabilities,
  required: { modifyVolume: boolean },
): string | undefined {
  const base = "CSI driver does not support dynamic provisioning";
  if (!capabilities.controllerService) {
    return `${base}: plugin CONTROLLER_SERVICE capability is not reported`;
  }
  if (!capabilities.controller.includes("CREATE_DELETE_VOLUME")) {
    return `${base}: controller CREATE_DELETE_VOLUME capability is not reported`;
  }
  if (required.modifyVolume && !capabilities.controller.includes("MODIFY_VOLUME")) {
    return "CSI driver does not support VolumeAttributesClass: " +
      "controller MODIFY_VOLUME capability is not reported";
  }
  return undefined;
}
