/**
 * Volume expansion (--enable-resizer), put together from the ports main.ts
 * hands over: the claims bound to this node's PVs, queued on the changes
 * external-resizer's updatePVC reacts to, and the resize controller.
 */
import type { Config } from "../config/types.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import type { Logger } from "../log/logger.ts";
import type { Claim, PersistentVolume, StorageClass } from "../model/objects.ts";
import { retryQueue, runPool } from "../queue/work/pool.ts";
import type { WorkQueueMetrics } from "../queue/work/prometheus_metrics.ts";
import type { Lifecycle } from "../runtime/lifecycle.ts";
import { type Synced, waitForSync } from "../runtime/synced.ts";
import { ResizeController } from "./controller.ts";
import { resizeStatusOf } from "./decide.ts";
import { ResizeMemory } from "./memory.ts";
import type { EventRecorder, Lookup, ResizeApi, ResizeCsi } from "./ports.ts";

/** The claim cache as the resizer runs it. */
export interface ClaimWatch extends Lookup<Claim>, Synced {
  onChange(
    handler: (change: { key: string; old: Claim | undefined; new: Claim | undefined }) => void,
  ): void;
  run(signal: AbortSignal): Promise<void>;
}

/** What volume expansion is built from. */
interface ResizeParts {
  config: Config;
  driver: DriverInfo;
  /** Creates the claim cache; called once the PV cache it filters by has synced. */
  watchClaims: () => ClaimWatch;
  volumes: Lookup<PersistentVolume> & Synced;
  classes: Lookup<StorageClass> & Synced;
  api: ResizeApi;
  csi: ResizeCsi;
  events: EventRecorder;
  queues: WorkQueueMetrics;
  publishedFree?: (className: string) => bigint | undefined;
  logger: Logger;
}

/** Whether a claim's change may need a sync (external-resizer's updatePVC). */
export function wantsSync(old: Claim | undefined, next: Claim | undefined): boolean {
  if (next === undefined) return false;
  if (old === undefined) return true;
  const request = (claim: Claim) => claim.spec.resources?.requests?.storage;
  const capacity = (claim: Claim) => claim.status?.capacity?.storage;
  return request(old) !== request(next) || capacity(old) !== capacity(next) ||
    resizeStatusOf(old) !== resizeStatusOf(next);
}

/** Builds volume expansion; returns its start, for once the PV and class caches have synced. */
export function startResizer(parts: ResizeParts, life: Lifecycle): () => void {
  const { config, driver, logger } = parts;
  const queue = retryQueue(
    { startMs: config.retryIntervalStartMs, maxMs: config.retryIntervalMaxMs },
    parts.queues.forQueue(`${driver.name}-pvc`),
  );
  const memory = new ResizeMemory({ retentionMs: config.retryIntervalMaxMs });
  return () => {
    const claims = parts.watchClaims();
    const controller = new ResizeController(
      {
        claims,
        volumes: parts.volumes,
        classes: parts.classes,
        api: parts.api,
        csi: parts.csi,
        events: parts.events,
        ...(parts.publishedFree === undefined ? {} : { publishedFree: parts.publishedFree }),
      },
      memory,
      {
        driverName: driver.name,
        nodeName: config.nodeName,
        singleNodeMultiWriter: driver.controllerCapabilities.has("SINGLE_NODE_MULTI_WRITER"),
      },
      logger.child({ component: "resize" }),
    );
    claims.onChange((change) => {
      if (change.new === undefined) memory.forget(change.key);
      if (wantsSync(change.old, change.new)) queue.add(change.key);
    });
    life.track(claims.run(life.shutdown.signal), { name: "resize claims informer" });
    const reads: Synced[] = [claims, parts.volumes, parts.classes];
    life.track(
      runPool(queue, {
        gate: () => waitForSync(reads, life.shutdown.signal),
        workers: config.workerThreads,
        handle: (key, signal) => controller.sync(key, signal),
        stop: life.shutdown.signal,
        halt: life.halt.signal,
        logger: logger.child({ component: "resize" }),
      }),
      { name: "resize workers" },
    );
  };
}
