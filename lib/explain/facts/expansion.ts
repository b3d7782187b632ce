/**
 * Where a bound claim's expansion is, from what the resizer wrote on it
 * (external-resizer's fields, which --enable-resizer writes the same):
 * undefined when the claim asks for no more than it has.
 */
import type { Claim } from "../../model/objects.ts";
import { parseQuantity } from "../../model/quantity.ts";

function bytesOf(text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  const parsed = parseQuantity(text);
  return parsed.ok ? parsed.value : undefined;
}

/** One sentence on the claim's expansion, or undefined when none is asked for. */
export function expansionText(claim: Claim): string | undefined {
  const request = claim.spec.resources?.requests?.storage;
  const capacity = claim.status?.capacity?.storage;
  const requested = bytesOf(request);
  const has = bytesOf(capacity);
  if (requested === undefined || has === undefined || requested <= has) return undefined;
  const target = claim.status?.allocatedResources?.storage ?? request;
  const error = claim.status?.conditions?.find((c) => c.type === "ControllerResizeError");
  switch (claim.status?.allocatedResourceStatuses?.storage) {
    case "ControllerResizeInProgress":
      return `expansion to ${target} under way: ControllerExpandVolume is running or retried` +
        (error?.message ? ` (last failure: ${error.message})` : "");
    case "ControllerResizeInfeasible":
      return `expansion to ${target} failed: ${error?.message ?? "the driver refused the size"}; ` +
        `lower the request (not below ${capacity}) to recover`;
    case "NodeResizePending":
    case "NodeResizeInProgress":
      return `volume expanded to ${target}; the file system is grown by the kubelet when a pod ` +
        `using the claim (re)starts on the node`;
    case "NodeResizeInfeasible":
      return `expansion to ${target} failed on the node (the kubelet's NodeExpandVolume)`;
    default:
      return `asks for ${request} but has ${capacity}, and no resizer has started: is ` +
        `--enable-resizer set on the node's agent (or a central external-resizer running), and ` +
        `does the class allow volume expansion?`;
  }
}
