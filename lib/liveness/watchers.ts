/**
 * Who watches the Leases, and so who may act for a gone agent: the
 * capacity withdrawal and the release of a lost node's volumes ask the same
 * question and must get the same answer. Pure.
 */
import { MANAGED_BY_BASE } from "../model/labels.ts";
import { LIVENESS_WATCHERS, WATCHERS_KEY } from "../model/lease.ts";
import { rendezvousTop } from "../model/rendezvous.ts";

/**
 * The agents that watch the Leases: the LIVENESS_WATCHERS agents that
 * rendezvous hashing ranks highest among those that publish capacity (and
 * this one), leaving out those known gone. Only they can see who is gone,
 * and only they act.
 */
export function livenessWatchers(
  self: string,
  publishers: readonly string[],
  gone: ReadonlySet<string>,
): string[] {
  const agents = publishers.filter((publisher) =>
    publisher !== MANAGED_BY_BASE && publisher !== self && !gone.has(publisher)
  );
  return rendezvousTop(WATCHERS_KEY, [...agents, self], LIVENESS_WATCHERS);
}

const MAX_CHECK_MS = 10_000;
const MIN_CHECK_MS = 1000;

/**
 * How often a watcher's loop checks for something due `afterMs` after an
 * agent is gone: four times per `afterMs`, at least every 10 s and at most
 * every second.
 */
export function checkEveryMs(afterMs: number): number {
  if (afterMs <= 0) return MAX_CHECK_MS;
  return Math.max(MIN_CHECK_MS, Math.min(MAX_CHECK_MS, Math.floor(afterMs / 4)));
}
