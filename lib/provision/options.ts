/**
 * The provisioning controller's options, from the flags and the driver's
 * answers at start-up. Pure, so that the mapping is tested on its own.
 */
import type { Config } from "../config/types.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import { nodeLabels } from "../model/labels.ts";
import type { ProvisionControllerOptions } from "./context.ts";
import type { RaceOptions } from "./race/ports.ts";

/** The provisioner identity stored on every PV (informational, as upstream). */
export function provisionerIdentity(
  driverName: string,
  options: { nodeName: string; now: number; random: number },
): string {
  return `${options.now}-${Math.floor(options.random * 10_000)}-${driverName}-${options.nodeName}`;
}

/** Maps configuration and driver facts to the controller's options. */
export function provisionControllerOptions(
  config: Config,
  driver: DriverInfo,
  options: { identity: string },
): ProvisionControllerOptions {
  const topologySupported = config.featureGates.Topology &&
    driver.pluginCapabilities.has("VOLUME_ACCESSIBILITY_CONSTRAINTS");
  return {
    decide: {
      driverName: driver.name,
      nodeName: config.nodeName,
      immediateBinding: config.nodeDeploymentImmediateBinding,
    },
    prepare: {
      driverName: driver.name,
      nodeName: config.nodeName,
      volumeNamePrefix: config.volumeNamePrefix,
      volumeNameUuidLength: config.volumeNameUuidLength,
      extraCreateMetadata: config.extraCreateMetadata,
      defaultFstype: config.defaultFstype,
      strictTopology: config.strictTopology,
      topologySupported,
      segment: driver.segment,
      capabilities: {
        controllerService: driver.pluginCapabilities.has("CONTROLLER_SERVICE"),
        controller: [...driver.controllerCapabilities],
      },
      volumeAttributesClassEnabled: config.featureGates.VolumeAttributesClass,
      crossNamespaceVolumeDataSource: config.featureGates.CrossNamespaceVolumeDataSource,
      preventVolumeModeConversion: config.preventVolumeModeConversion,
    },
    persistentVolume: {
      driverName: driver.name,
      identity: options.identity,
      controllerPublishReadonly: config.controllerPublishReadonly,
      topologySupported,
      node: {
        name: config.nodeName,
        segment: driver.segment,
        labels: nodeLabels(driver.name, config.nodeName),
      },
    },
    timeoutMs: config.timeoutMs,
  };
}

/** The Immediate binding race's options: the delays, the GetCapacity call's bound, the driver's facts. */
export function raceOptions(
  config: Config,
  driver: DriverInfo,
  options: { controller: ProvisionControllerOptions; publisher: string | undefined },
): RaceOptions {
  return {
    nodeName: config.nodeName,
    baseDelayMs: config.nodeDeploymentBaseDelayMs,
    maxDelayMs: config.nodeDeploymentMaxDelayMs,
    timeoutMs: config.timeoutMs,
    prepare: options.controller.prepare,
    getCapacity: driver.controllerCapabilities.has("GET_CAPACITY"),
    ...(options.publisher === undefined ? {} : { publisher: options.publisher }),
  };
}
