/**
 * Puts the capacity publisher together from the real parts main.ts hands
 * over: the informer of this node's own objects (label-selected, in
 * NAMESPACE), the write echoes, the controller, the metrics, the
 * `csistoragecapacity` work queue and the publisher. Kept out of main.ts so
 * that the composition root stays short; nothing here starts anything.
 */
import type { Registry } from "prom-client";
import type { CsiCaller } from "../csi/connection.ts";
import { Informer } from "../kube/informer.ts";
import type { StorageClass } from "../model/objects.ts";
import type { KubeRest } from "../kube/rest.ts";
import { TokenBucket } from "../queue/token_bucket.ts";
import {
  createStorageCapacity,
  deleteStorageCapacity,
  storageCapacityPath,
  trimStorageCapacity,
  updateStorageCapacity,
} from "../kube/storage_capacity.ts";
import { type StorageCapacity } from "../model/storage_capacity.ts";
import type { Logger } from "../log/logger.ts";
import type { WorkQueueMetrics } from "../queue/prometheus_metrics.ts";
import { ItemExponentialFailureRateLimiter } from "../queue/rate_limiters.ts";
import { WorkQueue } from "../queue/work_queue.ts";
import { CapacityController } from "./controller.ts";
import { WriteEchoes } from "./echoes.ts";
import { createCapacityMetrics } from "./metrics.ts";
import type { CapacityOptions } from "./options.ts";
import type { CapacityOwner } from "./ports.ts";
import { CapacityPublisher, type WatchedCache } from "./publisher.ts";
import { findCapacityOwner, requireCapacityApi } from "./startup.ts";
import { CapacityWriter } from "./writer.ts";

/** upstream's queue name, for the workqueue_* series. */
export const CAPACITY_QUEUE_NAME = "csistoragecapacity";

/** The real parts. */
export interface CapacityParts {
  options: CapacityOptions;
  /** The main client: the informer's list and watch. */
  rest: KubeRest;
  /** The capacity client (--kube-api-capacity-qps/-burst): every write. */
  writes: KubeRest;

  csi: CsiCaller;
  /** The StorageClass informer provisioning runs; its handler is added here. */
  classes: WatchedCache<StorageClass> & {
    get(name: string): StorageClass | undefined;
    list(): StorageClass[];
  };
  owner: CapacityOwner;
  registry: Registry;
  /** The factory main.ts created for the registry (prom-client registers each family once). */
  queueMetrics: WorkQueueMetrics;
  ready: (state: true | string) => void;
  logger: Logger;
}

/** Creates the publisher (it registers its informer handlers; run() starts it). */
export function assembleCapacityPublisher(parts: CapacityParts): CapacityPublisher {
  const { options, writes } = parts;
  const namespace = options.namespace;
  const objects = new Informer<StorageCapacity>(parts.rest, {
    resource: "csistoragecapacities",
    path: storageCapacityPath(namespace),
    labelSelector: options.labelSelector,
    trim: trimStorageCapacity,
    resourceVersionOf: (object) => object.metadata.resourceVersion,
    logger: parts.logger,
  });
  const echoes = new WriteEchoes();
  // The capacity client's QPS and burst once more, taken before each of its requests: the
  // controller waits for it before it reads the capacity it writes (writer.ts). The client's
  // own bucket, refilled alike and taken after this one, then never waits.
  const budget = new TokenBucket(options.client);
  // The gauges read the controller, which needs the metrics: one refers to the other late.
  const late: { controller?: CapacityController } = {};
  const metrics = createCapacityMetrics(parts.registry, {
    goal: () => late.controller?.goal() ?? 0,
    current: () => late.controller?.current() ?? 0,
    obsolete: () => late.controller?.obsolete() ?? 0,
  });
  const writer = new CapacityWriter({
    api: {
      create: (object, signal) => createStorageCapacity(writes, { namespace, object }, signal),
      update: (target, signal) => updateStorageCapacity(writes, { namespace, ...target }, signal),
      delete: (target, signal) => deleteStorageCapacity(writes, { namespace, ...target }, signal),
    },
    owner: parts.owner,
    budget: { take: (signal) => budget.take("high", signal) },
    echoes,
    metrics,
    logger: parts.logger,
  });
  const controller = new CapacityController({
    classes: parts.classes,
    objects,
    csi: {
      // The connection's default deadline is --timeout, as upstream's GetCapacity.
      getCapacity: (request, signal) => parts.csi.call("GetCapacity", request, { signal }),
    },
    owner: parts.owner,
    writer,
    metrics,
    logger: parts.logger,
  }, { desired: options.desired, segment: options.segment, labels: options.labels });
  late.controller = controller;
  const queue = new WorkQueue({
    rateLimiter: new ItemExponentialFailureRateLimiter(options.retry.startMs, options.retry.maxMs),
    metrics: parts.queueMetrics.forQueue(CAPACITY_QUEUE_NAME),
  });
  return new CapacityPublisher({
    controller,
    queue,
    classes: parts.classes,
    objects,
    echoes,
    ready: parts.ready,
    release: () => budget.close(),
    logger: parts.logger,
  }, {
    driverName: options.desired.driverName,
    workers: options.workers,
    pollIntervalMs: options.pollIntervalMs,
  });
}

/** What starting the publisher needs beyond the parts above. */
export interface CapacityStart {
  options: CapacityOptions;
  rest: KubeRest;
  /** Makes the separate client of the capacity writes (its own QPS and burst). */
  writesClient: (limits: { qps: number; burst: number }) => KubeRest;
  csi: CsiCaller;
  classes: CapacityParts["classes"];
  registry: Registry;
  queueMetrics: WorkQueueMetrics;
  ready: (state: true | string) => void;
  logger: Logger;
  signal: AbortSignal;
}

/**
 * Checks the v1 API, finds the owner and builds the publisher: the parts of
 * --enable-capacity that happen once at start-up. The caller runs it.
 */
export async function startCapacityPublisher(
  start: CapacityStart,
): Promise<{ publisher: CapacityPublisher; writes: KubeRest }> {
  await requireCapacityApi(start.rest);
  const owner = await findCapacityOwner(start.rest, start.options.owner, {
    logger: start.logger,
    signal: start.signal,
  });
  const writes = start.writesClient(start.options.client);
  const publisher = assembleCapacityPublisher({ ...start, writes, owner });
  return { publisher, writes };
}
