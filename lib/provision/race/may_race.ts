/**
 * May a node race for an Immediate claim? The one predicate of the
 * ownership race: pure, and asked for any node whose topology segment is
 * known, so that the same answer decides whether this node races and which
 * publishing nodes count when one agent summarizes why nobody took a claim.
 * The rules: the class's allowedTopologies, then the claim's snapshot or
 * clone source, which with node-local storage only one node holds.
 */
import type { Segments } from "../../csi/types.ts";
import type { Claim, StorageClass } from "../../model/objects.ts";
import { accessibilityRequirements } from "../../topology/requirements.ts";
import type { SourceFacts } from "../source/checks.ts";
import { sourceRaceVerdict } from "../source/holder.ts";

/** A node as the race knows it: its name (for messages) and its segment. */
interface RaceNode {
  name: string;
  /** The node's topology segment; null when its driver reported none. */
  segment: Segments | null;
}

/** What the question is about. */
export interface RaceInput {
  claim: Claim;
  storageClass: StorageClass;
  node: RaceNode;
  /**
   * What was read about the claim's snapshot or clone source
   * (source/load.ts readClaimSourceFacts); undefined without one.
   */
  source?: SourceFacts | undefined;
}

/** The flags the rules read. */
interface RaceRuleOptions {
  strictTopology: boolean;
  /** VOLUME_ACCESSIBILITY_CONSTRAINTS and the Topology gate. */
  topologySupported: boolean;
}

/** Why a node stays out of the race for a claim. */
type RaceExclusion = "topology" | "source";

/** The answer; `message` is for the debug log. */
type RaceVerdict =
  | { ok: true }
  | { ok: false; reason: RaceExclusion; message: string };

const MAY_RACE: RaceVerdict = { ok: true };

/**
 * The node races when the class's allowedTopologies allow it
 * (allowedByTopology) and, for a restore or a clone, when it holds the
 * source (source/holder.ts sourceRaceVerdict: beyond upstream, which lets
 * every node race and the winner fail CreateVolume for ever).
 */
export function mayRace(input: RaceInput, options: RaceRuleOptions): RaceVerdict {
  const allowed = allowedByTopology(input, options);
  if (!allowed.ok) return allowed;
  return sourceRaceVerdict(input.source, input.node);
}

/**
 * As upstream's checkNode (pkg/controller/controller.go): with topology and
 * a class that has allowedTopologies, the node races only when the
 * accessibility requirements for it can be built, i.e. some allowed term
 * is a subset of its segment (both with and without --strict-topology).
 */
function allowedByTopology(input: RaceInput, options: RaceRuleOptions): RaceVerdict {
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
