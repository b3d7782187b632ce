/**
 * Lost nodes (--enable-capacity): on the agents that watch the Leases, the
 * clock of each gone agent's deleted Node, and the release of its volumes
 * once --node-loss-release-after (above 0) has passed.
 */
import type { Logger } from "../../log/logger.ts";
import { checkEveryMs } from "../../liveness/watchers.ts";
import type { Lifecycle } from "../../runtime/lifecycle.ts";
import type { LostVolumeHandler } from "./act.ts";
import type { LostMetrics } from "./metrics.ts";
import type { LeaseView, LostNodeReads, Publishers } from "./ports.ts";
import { LostNodeReleaser } from "./releaser.ts";

/** Starts the loop; it ends with the soft stop. */
export function startNodeLoss(
  parts: {
    leases: LeaseView;
    publishers: Publishers;
    reads: LostNodeReads;
    volumes: LostVolumeHandler;
    metrics: LostMetrics;
    logger: Logger;
  },
  options: { self: string; driverName: string; releaseAfterMs: number },
  life: Lifecycle,
): void {
  const releaser = new LostNodeReleaser(parts, {
    ...options,
    checkEveryMs: checkEveryMs(options.releaseAfterMs),
  });
  life.track(releaser.run(life.shutdown.signal), { name: "node loss" });
}
