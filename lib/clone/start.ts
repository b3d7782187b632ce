/**
 * The protection controllers, put together from the ports main.ts hands
 * over, as upstream starts them: the cloning-protection controller when the
 * driver has CLONE_VOLUME (--cloning-protection-threads workers), and the
 * snapshot orphan sweep when the driver has CREATE_DELETE_SNAPSHOT and
 * --snapshot-orphan-sweep-interval is not 0.
 */
import type { Config } from "../config/types.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import type { Logger } from "../log/logger.ts";
import { retryQueue, runPool } from "../queue/work/pool.ts";
import type { WorkQueueMetrics } from "../queue/work/prometheus_metrics.ts";
import type { Lifecycle } from "../runtime/lifecycle.ts";
import { CloningProtectionController } from "./cloning_protection.ts";
import type { ClaimCache, CloneApi, SnapshotCache, SweepApi, VolumeCache } from "./ports.ts";
import { SnapshotSweep } from "./snapshot_sweep.ts";

/** Name of the cloning-protection queue in the workqueue metrics (upstream reuses "claims"). */
const CLONING_PROTECTION_QUEUE = "cloning-protection";

/** What the protection controllers are built from. */
interface ProtectionParts {
  config: Config;
  driver: DriverInfo;
  claims: ClaimCache;
  volumes: VolumeCache;
  api: CloneApi & SweepApi;
  /** Creates (does not start) the informer of protected VolumeSnapshots. */
  openSnapshotCache: () => SnapshotCache;
  queues: WorkQueueMetrics;
  logger: Logger;
}

/**
 * Builds the controllers the driver calls for and registers their claim
 * handler (before the informers run); returns their start, for once the
 * caches have synced.
 */
export function startProtection(parts: ProtectionParts, life: Lifecycle): () => void {
  const { config, driver, logger } = parts;
  const starts: (() => void)[] = [];
  if (driver.controllerCapabilities.has("CLONE_VOLUME")) {
    const queue = retryQueue(
      { startMs: config.retryIntervalStartMs, maxMs: config.retryIntervalMaxMs },
      parts.queues.forQueue(CLONING_PROTECTION_QUEUE),
    );
    const controller = new CloningProtectionController({
      claims: parts.claims,
      volumes: parts.volumes,
      api: parts.api,
      logger: logger.child({ component: "cloning-protection" }),
    });
    parts.claims.onChange((change) => {
      for (const key of CloningProtectionController.keysFor(change)) queue.add(key);
    });
    starts.push(() =>
      life.track(runPool(queue, {
        workers: config.cloningProtectionThreads,
        handle: (key, signal) => controller.sync(key, signal),
        stop: life.shutdown.signal,
        halt: life.halt.signal,
        logger: logger.child({ component: CLONING_PROTECTION_QUEUE }),
      }))
    );
  }
  const sweeps = config.snapshotOrphanSweepIntervalMs > 0 &&
    driver.controllerCapabilities.has("CREATE_DELETE_SNAPSHOT");
  if (sweeps) {
    const sweep = new SnapshotSweep({
      claims: parts.claims,
      api: parts.api,
      openSnapshotCache: parts.openSnapshotCache,
      logger: logger.child({ component: "snapshot-sweep" }),
    }, { intervalMs: config.snapshotOrphanSweepIntervalMs });
    starts.push(() => life.track(sweep.run(life.shutdown.signal)));
  }
  return () => {
    for (const start of starts) start();
  };
}
