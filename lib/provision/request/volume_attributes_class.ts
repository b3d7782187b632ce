/**
 * CreateVolumeRequest.mutable_parameters from the claim's
 * VolumeAttributesClass, which must belong to our driver.
 */
import type { Claim, VolumeAttributesClass } from "../../model/objects.ts";
import { atClaim } from "../../model/messages.ts";
import { type Problem, problem } from "../outcome.ts";

const FIELD = "spec.volumeAttributesClassName";

/** The class's parameters (undefined when the claim names no class), or a problem. */
export function mutableParameters(
  input: { claim: Claim; volumeAttributesClass?: VolumeAttributesClass | undefined },
  options: { driverName: string; vacName: string | undefined },
): { kind: "parameters"; value: Record<string, string> | undefined } | Problem {
  if (options.vacName === undefined) return { kind: "parameters", value: undefined };
  const vac = input.volumeAttributesClass;
  if (vac === undefined || vac.metadata.name !== options.vacName) {
    // Upstream GETs the class; its NotFound reads like this, and is retried (NoChange).
    const message = `volumeattributesclasses.storage.k8s.io ${
      JSON.stringify(options.vacName)
    } not found`;
    return problem(atClaim(message, input.claim, FIELD), { state: "noChange" });
  }
  if (vac.driverName !== options.driverName) {
    const message = `VAC ${options.vacName} referenced in PVC is for driver ${vac.driverName} ` +
      `which does not match driver name ${options.driverName}`;
    return problem(atClaim(message, input.claim, FIELD));
  }
  return { kind: "parameters", value: { ...vac.parameters } };
}
