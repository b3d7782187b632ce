/**
 * Which node holds a claim's data source, from what was read about it
 * (load.ts): the node of the source claim's PV for a clone, the
 * node of the volume a snapshot was taken of for a restore. Pure, and asked
 * for any node by its topology segment, so that the Immediate binding
 * ownership race can leave out the nodes that cannot create the volume: with
 * node-local storage only the node that holds the source can (upstream lets
 * every node race, and the winner's CreateVolume fails with NotFound for
 * ever: external-provisioner pkg/controller/controller.go, becomeOwner).
 * The facts come from load.ts's readClaimSourceFacts(), read once
 * per claim; the verdict for any node's segment is then pure.
 */
import type { Segments } from "../../csi/types.ts";
import type { SourceFacts } from "./checks.ts";
import { locateVolume, type SourceLocation } from "./location.ts";

/**
 * Where the source lives, relative to the node of `segment`: "here" also
 * for a volume without node affinity, "unknown" when the facts name no PV
 * (a pre-provisioned snapshot, a source volume gone, a failed read).
 */
export function locateSource(facts: SourceFacts, segment: Segments | null): SourceLocation {
  if (facts.kind === "clone") {
    const volume = facts.volume;
    if (volume === undefined) {
      return { kind: "unknown", reason: "the source claim names no volume" };
    }
    return volume.ok ? locateVolume(volume.value, segment) : {
      kind: "unknown",
      reason: `its PersistentVolume could not be read (${volume.error})`,
    };
  }
  const volume = facts.sourceVolume;
  if (volume === undefined) {
    return { kind: "unknown", reason: "the volume it was taken of is not known" };
  }
  return volume.ok
    ? locateVolume(volume.value, segment)
    : { kind: "unknown", reason: volume.reason };
}

/** A node as the ownership race knows it. */
interface CandidateNode {
  name: string;
  /** Its topology segment; null when its driver reported none. */
  segment: Segments | null;
}

/** May the node take part in the race for a claim with this source? `message` is for the log. */
type SourceRaceVerdict =
  | { ok: true }
  | { ok: false; reason: "source"; message: string };

/**
 * For an Immediate claim with a snapshot or clone source: only the node
 * that holds the source races. When no node is known to hold it, every
 * node races (the winner tries CreateVolume, and a NotFound is explained,
 * as for a WaitForFirstConsumer claim); a claim without a source
 * (`facts` undefined) is no concern of this rule.
 */
export function sourceRaceVerdict(
  facts: SourceFacts | undefined,
  node: CandidateNode,
): SourceRaceVerdict {
  if (facts === undefined) return { ok: true };
  const location = locateSource(facts, node.segment);
  if (location.kind !== "elsewhere") return { ok: true };
  const what = facts.kind === "clone"
    ? "the claim it clones"
    : "the volume its snapshot was taken of";
  return {
    ok: false,
    reason: "source",
    message: `${node.name} does not hold ${what} (PersistentVolume ` +
      `${JSON.stringify(location.volumeName)} is on the node with ${location.where})`,
  };
}
