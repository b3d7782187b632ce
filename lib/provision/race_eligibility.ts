/**
 * May a node race for an Immediate claim? The one predicate of the
 * ownership race: pure, and asked for any node whose topology segment is
 * known, so that the same answer decides whether this node races and which
 * publishing nodes count when one agent summarizes why nobody took a claim.
 * Later rules (a snapshot or clone source that only one node holds) extend
 * it here, and both uses follow.
 */
import type { Segments } from "../csi/types.ts";
import type { Claim, StorageClass } from "../model/objects.ts";
import { accessibilityRequirements } from "../topology/requirements.ts";

/** A node as the race knows it: its name (for messages) and its segment. */
export interface RaceNode {
  name: string;
  /** The node's topology segment; null when its driver reported none. */
  segment: Segments | null;
}

/** What the question is about. */
export interface RaceInput {
  claim: Claim;
  storageClass: StorageClass;
  node: RaceNode;
}

/** The flags the rules read. */
export interface RaceRuleOptions {
  strictTopology: boolean;
  /** VOLUME_ACCESSIBILITY_CONSTRAINTS and the Topology gate. */
  topologySupported: boolean;
}

/** Why a node stays out of the race for a claim. */
export type RaceExclusion = "topology";

/** The answer; `message` is for the debug log. */
export type RaceVerdict =
  | { ok: true }
  | { ok: false; reason: RaceExclusion; message: string };

const MAY_RACE: RaceVerdict = { ok: true };

/**
 * As upstream's checkNode (pkg/controller/controller.go): with topology and
 * a class that has allowedTopologies, the node races only when the
 * accessibility requirements for it can be built, i.e. some allowed term
 * is a subset of its segment (both with and without --strict-topology).
 */
export function mayRace(input: RaceInput, options: RaceRuleOptions): RaceVerdict {
  const allowed = input.storageClass.allowedTopologies ?? [];
  if (allowed.length === 0 || !options.topologySupported) return MAY_RACE;
  const requirements = accessibilityRequirements(
    { segment: input.node.segment, nodeName: input.node.name, allowedTopologies: allowed },
    { strictTopology: options.strictTopology },
  );
  if (requirements.ok) return MAY_RACE;
  const { namespace, name } = input.claim.metadata;
  return {
    ok: false,
    reason: "topology",
    message: `${input.node.name}: ignoring PVC ${namespace}/${name}, allowed topologies is not ` +
      `compatible: ${requirements.error}`,
  };
}
