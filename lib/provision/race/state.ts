/**
 * The state of one race, in a module of its own: the race, its reporter and
 * its turn all read it, and none of them needs the others to know its shape.
 */
import type { SourceFacts } from "../source/checks.ts";

/** One claim this node races for (or, when it may not race, watches for the summary). */
export interface Race {
  key: string;
  uid: string;
  /** clock.now() when this node first saw the claim unowned. */
  since: number;
  /** The delay timer's cancel, while it runs. */
  timer: (() => void) | undefined;
  /** The timer fired: the next sync of the key takes the turn. */
  due: boolean;
  /** Aborted when the race ends during a turn. */
  turn: AbortController | undefined;
  /** The claim's snapshot or clone source, read once when the race starts. */
  source: SourceFacts | undefined;
}
