/**
 * Provisioning, put together from the ports main.ts hands over: the claim
 * queue fed by the claim and StorageClass informers, the controller, and the
 * saver of PVs whose first save failed (upstream's "unsavedpvs" queue).
 */
import type { Registry } from "prom-client";
import type { Config } from "../config/types.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import type {
  Discovery,
  EventRecorder,
  Lookup,
  ProvisionApi,
  ProvisionCsi,
  WatchedLookup,
} from "./ports.ts";
import type { Logger } from "../log/logger.ts";
import type { Claim, PersistentVolume, StorageClass } from "../model/objects.ts";
import { retryQueue, runPool } from "../queue/pool.ts";
import type { BoundFactory } from "../queue/bounded_metrics.ts";
import type { WorkQueueMetrics } from "../queue/prometheus_metrics.ts";
import { type Synced, waitForSync } from "../runtime/synced.ts";
import { defaultControllerRateLimiter } from "../queue/rate_limiters.ts";
import { WorkQueue } from "../queue/work_queue.ts";
import type { Lifecycle } from "../runtime/lifecycle.ts";
import { claimStorageClassName } from "./claim_class.ts";
import { ProvisionController } from "./controller.ts";
import { createProvisionMetrics } from "./metrics.ts";
import { provisionControllerOptions, provisionerIdentity } from "./options.ts";
import { PvSaver } from "./pv_saver.ts";

/** What provisioning is built from. */
export interface ProvisioningParts {
  config: Config;
  driver: DriverInfo;
  claims: WatchedLookup<Claim> & Synced;
  classes: WatchedLookup<StorageClass> & Synced;
  volumes: Lookup<PersistentVolume> & Synced;
  api: ProvisionApi & Discovery;
  csi: ProvisionCsi;
  events: EventRecorder;
  registry: Registry;
  queues: WorkQueueMetrics;
  /** Observers of the bounded memos (csi_node_provisioner_bounded_*). */
  bounds?: BoundFactory;
  logger: Logger;
}

/**
 * Builds provisioning and registers its informer handlers (before the
 * informers run); returns the start of its workers, which wait until every
 * cache they read (claims, classes, PVs) has listed once.
 */
export async function startProvisioning(
  parts: ProvisioningParts,
  life: Lifecycle,
): Promise<() => void> {
  const { config, driver, claims, classes, logger } = parts;
  const gates = { ...config.featureGates };
  gates.VolumeAttributesClass &&= await volumeAttributesClassServed(parts, config);
  const queue = retryQueue(
    { startMs: config.retryIntervalStartMs, maxMs: config.retryIntervalMaxMs },
    parts.queues.forQueue("claims"),
  );
  const saveQueue = new WorkQueue({
    rateLimiter: defaultControllerRateLimiter(),
    metrics: parts.queues.forQueue("unsavedpvs"),
  });
  const saver = new PvSaver({
    api: parts.api,
    events: parts.events,
    logger: logger.child({ component: "pv-saver" }),
    queue: saveQueue,
  });
  const identity = provisionerIdentity(driver.name, {
    nodeName: config.nodeName,
    now: Date.now(),
    random: Math.random(),
  });
  const controller = new ProvisionController({
    caches: { claims, classes, volumes: parts.volumes },
    api: parts.api,
    csi: parts.csi,
    events: parts.events,
    metrics: createProvisionMetrics(parts.registry, parts.bounds),
    saver,
    logger: logger.child({ component: "provision" }),
  }, provisionControllerOptions({ ...config, featureGates: gates }, driver, { identity }));
  claims.onChange((change) => queue.add(change.key));
  classes.onChange((change) => {
    for (const claim of claims.list()) {
      if (claimStorageClassName(claim) === change.key) {
        queue.add(`${claim.metadata.namespace}/${claim.metadata.name}`);
      }
    }
  });
  return () => {
    life.track(saver.run(life.halt.signal).finally(() => saveQueue.shutDown()), {
      final: true,
      name: "PV saver",
    });
    const run = () =>
      runPool(queue, {
        gate: () => waitForSync([claims, classes, parts.volumes], life.shutdown.signal),
        workers: config.workerThreads,
        handle: (key, signal) => controller.sync(key, signal),
        stop: life.shutdown.signal,
        halt: life.halt.signal,
        logger: logger.child({ component: "claims" }),
      });
    life.track(run(), { name: "claim workers" });
  };
}

/** As upstream: without the storage.k8s.io/v1 API, the gate is off unless set explicitly. */
async function volumeAttributesClassServed(
  parts: ProvisioningParts,
  config: Config,
): Promise<boolean> {
  if (config.featureGates.VolumeAttributesClassExplicit) return true;
  if (await parts.api.servesResource("storage.k8s.io/v1", "volumeattributesclasses")) return true;
  parts.logger.notice("VolumeAttributesClass is not served by the API server: feature disabled");
  return false;
}
