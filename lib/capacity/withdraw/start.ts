/**
 * The withdrawal of gone agents' capacity (--enable-capacity): its metrics
 * always (the alert reads them), its deletions only with
 * --capacity-withdraw-after above 0. It checks four times per
 * --capacity-withdraw-after, at least every 10 s and at most every second.
 */
import type { Registry } from "prom-client";
import type { Logger } from "../../log/logger.ts";
import type { Lifecycle } from "../../runtime/lifecycle.ts";
import type { AgentsLiveness, CapacityClient, EventRecorder, PublishedObjects } from "../ports.ts";
import { createWithdrawMetrics } from "./metrics.ts";
import { CapacityWithdrawer } from "./withdrawer.ts";
import { checkEveryMs } from "../../liveness/watchers.ts";

/** Starts the loop; it ends with the soft stop. */
export function startWithdrawal(
  parts: {
    agents: AgentsLiveness;
    objects: PublishedObjects;
    client: Pick<CapacityClient, "delete" | "budget">;
    events: EventRecorder;
    registry: Registry;
    logger: Logger;
  },
  options: { self: string; namespace: string; withdrawAfterMs: number },
  life: Lifecycle,
): void {
  const withdrawer = new CapacityWithdrawer(
    { ...parts, metrics: createWithdrawMetrics(parts.registry) },
    { ...options, checkEveryMs: checkEveryMs(options.withdrawAfterMs) },
  );
  life.track(withdrawer.run(life.shutdown.signal), { name: "capacity withdrawal" });
}
