/**
 * Where the volume behind a claim's data source lives, as far as this node
 * can tell from its PersistentVolume's node affinity, and how that is
 * explained when it is another node. Upstream calls CreateVolume wherever
 * the claim was scheduled; with node-local storage the driver then answers
 * NotFound, which is final, and the claim is retried on the wrong node for
 * ever (nothing in external-provisioner or csi-driver-host-path moves it).
 * Here a claim selected to the wrong node is explained and handed back to
 * the scheduler instead.
 */
import type { Segments } from "../../csi/types.ts";
import type { PersistentVolume, VolumeNodeAffinity } from "../../model/objects.ts";
import { volumeIsAccessible } from "../../topology/affinity.ts";

/** Where a source volume lives. */
export type SourceLocation =
  /** On this node (or anywhere: no node affinity, as upstream treats it). */
  | { kind: "here" }
  /** On the node(s) its PV's affinity names, not this one. */
  | { kind: "elsewhere"; volumeName: string; where: string }
  /** Not known (the PV is gone, or a pre-provisioned snapshot): CreateVolume is tried. */
  | { kind: "unknown"; reason: string };

/** Locates a source volume by its PV's node affinity against this node's segment. */
export function locateVolume(pv: PersistentVolume, segment: Segments | null): SourceLocation {
  const accessibility = volumeIsAccessible(pv.spec.nodeAffinity, segment);
  switch (accessibility.kind) {
    case "notAccessible":
      return {
        kind: "elsewhere",
        volumeName: pv.metadata.name,
        where: describeAffinity(pv.spec.nodeAffinity),
      };
    case "error":
      return {
        kind: "unknown",
        reason: `the node affinity of PersistentVolume ${
          JSON.stringify(pv.metadata.name)
        } cannot be read (${accessibility.message})`,
      };
    default:
      return { kind: "here" };
  }
}

/**
 * The required node affinity in words a pod's nodeAffinity can be written
 * from: `topology.hostpath.csi/node=node-b`; terms are alternatives.
 */
function describeAffinity(affinity: VolumeNodeAffinity | undefined): string {
  const terms = affinity?.required?.nodeSelectorTerms ?? [];
  return terms.map((term) =>
    (term.matchExpressions ?? []).map((expression) => {
      const values = expression.values ?? [];
      if (expression.operator === "In" && values.length === 1) {
        return `${expression.key}=${values[0]}`;
      }
      const list = values.length === 0 ? "" : ` (${values.join(", ")})`;
      return `${expression.key} ${expression.operator}${list}`;
    }).join(" and ")
  ).join(", or ");
}

/** What the claim's data source is, for the explanations. */
interface SourceName {
  kind: "snapshot" | "clone";
  namespace: string;
  name: string;
}

function sourceWords(source: SourceName): string {
  const kind = source.kind === "snapshot" ? "VolumeSnapshot" : "PersistentVolumeClaim";
  return `${kind} ${JSON.stringify(`${source.namespace}/${source.name}`)}`;
}

const RESCHEDULED =
  "volume.kubernetes.io/selected-node was removed so that the scheduler places the pod again";

/** The Warning for a claim selected to a node that does not hold its source volume. */
export function sourceElsewhereMessage(
  source: SourceName,
  location: { volumeName: string; where: string },
  options: { nodeName: string; driverName: string },
): string {
  const verb = source.kind === "snapshot" ? "restore" : "clone";
  const volume = source.kind === "snapshot" ? "its source volume" : "its volume";
  return `cannot ${verb} ${sourceWords(source)} on node ${JSON.stringify(options.nodeName)}: ` +
    `${volume} (PersistentVolume ${JSON.stringify(location.volumeName)}) is on the node with ` +
    `${location.where}, and the volumes of ${options.driverName} stay on their node. ` +
    `Run the pod that uses this claim there: give it a nodeAffinity (or nodeSelector) for ` +
    `${location.where}. ${RESCHEDULED}`;
}

/** The Warning for a NotFound from CreateVolume when the source's node is not known. */
export function sourceNotFoundMessage(
  source: SourceName,
  failure: { message: string; reason: string },
  options: { nodeName: string },
): string {
  return `${failure.message}: the driver on node ${JSON.stringify(options.nodeName)} does not ` +
    `hold the source of ${sourceWords(source)}, and which node does is not known ` +
    `(${failure.reason}). Run the pod that uses this claim on the node that holds it: give it a ` +
    `nodeAffinity (or nodeSelector) for that node. ${RESCHEDULED}; this node tries this ` +
    "claim again after 5 minutes at the earliest";
}
