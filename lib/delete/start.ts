/**
 * Deletion, put together from the ports main.ts hands over: the volume queue
 * fed by the PV informer (and by the VolumeAttachment informer, watched only
 * when the driver attaches volumes, as upstream), and the delete controller.
 */
import type { Registry } from "prom-client";
import type { Config } from "../config/types.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import type {
  AttachmentWatch,
  ClassLookup,
  DeleteApi,
  DeleteCsi,
  EventRecorder,
  VolumeLookup,
  Watched,
} from "./ports.ts";
import type { Logger } from "../log/logger.ts";
import type { PersistentVolume } from "../model/objects.ts";
import { retryQueue, runPool } from "../queue/work/pool.ts";
import type { BoundFactory } from "../queue/bounded_metrics.ts";
import type { WorkQueueMetrics } from "../queue/work/prometheus_metrics.ts";
import { type Synced, waitForSync } from "../runtime/synced.ts";
import type { Lifecycle } from "../runtime/lifecycle.ts";
import { DeleteController } from "./controller.ts";
import { createDeleteMetrics } from "./metrics.ts";

/** What deletion is built from. */
interface DeletionParts {
  config: Config;
  driver: DriverInfo;
  volumes: VolumeLookup & Watched<PersistentVolume> & Synced;
  classes: ClassLookup & Synced;
  /** Creates the VolumeAttachment cache; called only for a driver that attaches volumes. */
  watchAttachments: () => AttachmentWatch;
  api: DeleteApi;
  csi: DeleteCsi;
  events: EventRecorder;
  registry: Registry;
  queues: WorkQueueMetrics;
  /** Observers of the bounded memos (csi_node_provisioner_bounded_*). */
  bounds?: BoundFactory;
  logger: Logger;
}

/**
 * Builds deletion, registers its handlers and starts the VolumeAttachment
 * informer; returns the start of its workers, which wait until every cache
 * they read (PVs, classes, VolumeAttachments) has listed once.
 */
export function startDeletion(parts: DeletionParts, life: Lifecycle): () => void {
  const { config, driver, logger } = parts;
  const queue = retryQueue(
    { startMs: config.retryIntervalStartMs, maxMs: config.retryIntervalMaxMs },
    parts.queues.forQueue("volumes"),
  );
  // As upstream: VolumeAttachments are watched only when the driver attaches volumes.
  const attachments = driver.controllerCapabilities.has("PUBLISH_UNPUBLISH_VOLUME")
    ? parts.watchAttachments()
    : undefined;
  const controller = new DeleteController({
    volumes: parts.volumes,
    classes: parts.classes,
    api: parts.api,
    csi: parts.csi,
    ...(attachments === undefined ? {} : { attachments }),
    events: parts.events,
    metrics: createDeleteMetrics(parts.registry, {
      classExists: (name) => parts.classes.get(name) !== undefined,
      bounds: parts.bounds,
    }),
    logger: logger.child({ component: "delete" }),
  }, { segment: driver.segment });
  parts.volumes.onChange((change) => {
    if (controller.wants(change.key, change.new)) queue.add(change.key);
  });
  if (attachments !== undefined) {
    attachments.informer.onChange((change) => {
      const pv = (change.old ?? change.new)?.persistentVolumeName;
      if (pv !== undefined) queue.add(pv);
    });
    life.track(attachments.informer.run(life.shutdown.signal), {
      name: "volumeattachments informer",
    });
  }
  const reads: Synced[] = [parts.volumes, parts.classes];
  if (attachments !== undefined) reads.push(attachments.informer);
  const run = () =>
    runPool(queue, {
      gate: () => waitForSync(reads, life.shutdown.signal),
      workers: config.workerThreads,
      handle: (name, signal) => controller.sync(name, signal),
      stop: life.shutdown.signal,
      halt: life.halt.signal,
      logger: logger.child({ component: "volumes" }),
    });
  return () => life.track(run(), { name: "volume workers" });
}
