/**
 * external-resizer's Events on the claim (pkg/util/events.go reasons, its
 * messages word for word), and this agent's one addition: the Warning that
 * names the node and the free space it published when an expansion failed
 * for lack of it.
 */
import { claimSubject, type EventRecord } from "../model/events.ts";
import type { Claim } from "../model/objects.ts";
import { formatBinarySI } from "../model/quantity.ts";

export const REASON = {
  resizing: "Resizing",
  failed: "VolumeResizeFailed",
  fileSystemResizeRequired: "FileSystemResizeRequired",
  succeeded: "VolumeResizeSuccessful",
  exceedsCapacity: "ExpansionExceedsCapacity",
} as const;

function about(
  claim: Claim,
  type: EventRecord["type"],
  reason: string,
  message: string,
): EventRecord {
  return { subject: claimSubject(claim), type, reason, message };
}

export function resizingEvent(claim: Claim, pvName: string): EventRecord {
  return about(claim, "Normal", REASON.resizing, `External resizer is resizing volume ${pvName}`);
}

export function resizeFailedEvent(claim: Claim, message: string): EventRecord {
  return about(claim, "Warning", REASON.failed, message);
}

export function fileSystemResizeRequiredEvent(claim: Claim): EventRecord {
  return about(
    claim,
    "Normal",
    REASON.fileSystemResizeRequired,
    "Require file system resize of volume on node",
  );
}

export function resizeSucceededEvent(claim: Claim): EventRecord {
  return about(claim, "Normal", REASON.succeeded, "Resize volume succeeded");
}

/** The failure message of a driver call, as callResizeOnPlugin words it. */
export function pluginFailure(pvName: string, driverName: string, error: string): string {
  return `resize volume ${JSON.stringify(pvName)} by resizer ${
    JSON.stringify(driverName)
  } failed: ${error}`;
}

/** The node's published free space could not hold the growth the claim asks for. */
export function exceedsCapacityEvent(
  claim: Claim,
  facts: { node: string; className: string; free: bigint; growth: bigint; size: string },
): EventRecord {
  const message = `node ${facts.node} cannot expand this volume to ${facts.size}: it needs ` +
    `${formatBinarySI(facts.growth)} more and the node published ${formatBinarySI(facts.free)} ` +
    `free for StorageClass ${facts.className}; lower the request (it may go back down to the ` +
    `claim's current capacity) to recover`;
  return about(claim, "Warning", REASON.exceedsCapacity, message);
}
