/**
 * Lost nodes (--enable-capacity): on the agents that watch the Leases, the
 * clock of each gone agent's deleted Node, and the release of its volumes
 * once --node-loss-release-after (above 0) has passed.
 */
import { checkEveryMs } from "../../liveness/watchers.ts";
import type { Lifecycle } from "../../runtime/lifecycle.ts";
import { everyPeriod } from "../../runtime/sleep.ts";
import { LostNodeReleaser, type ReleaserDeps } from "./releaser.ts";

/** Starts the loop; it ends with the soft stop. */
export function startNodeLoss(
  parts: ReleaserDeps,
  options: { self: string; driverName: string; releaseAfterMs: number },
  life: Lifecycle,
): void {
  const releaser = new LostNodeReleaser(parts, options);
  const rounds = everyPeriod(
    checkEveryMs(options.releaseAfterMs),
    life.shutdown.signal,
    (signal) => releaser.check(signal),
    (error) => parts.logger.warn({ err: error }, "Cannot check the nodes of gone agents"),
  );
  life.track(rounds, { name: "node loss" });
}
