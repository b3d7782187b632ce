/**
 * Provisioning, put together from the ports main.ts hands over: the claim
 * queue fed by the claim and StorageClass informers, the controller, the
 * Immediate binding race (its timers put claim keys back on the same
 * queue), and the saver of PVs whose first save failed (upstream's
 * "unsavedpvs" queue).
 *
 * Recovery: once the caches have synced, the claim of every intent left in
 * the journal (by an agent that was killed, or lost its answers) is queued,
 * so that each intent is finished (the claim is still this node's) or
 * settled (its volume deleted) before or along with the new work.
 */
import type { Registry } from "prom-client";
import type { Config } from "../config/types.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import type {
  DataSourceApi,
  Discovery,
  EventRecorder,
  Journal,
  ListedLookup,
  ProvisionApi,
  ProvisionCsi,
  StartupCall,
  WatchedLookup,
} from "./ports.ts";
import type { Logger } from "../log/logger.ts";
import type { Claim, PersistentVolume, StorageClass } from "../model/objects.ts";
import { retryQueue, runPool } from "../queue/work/pool.ts";
import type { BoundFactory } from "../queue/bounded_metrics.ts";
import type { WorkQueueMetrics } from "../queue/work/prometheus_metrics.ts";
import { type Synced, waitForSync } from "../runtime/synced.ts";
import { defaultControllerRateLimiter } from "../queue/work/rate_limiters.ts";
import { WorkQueue } from "../queue/work/queue.ts";
import type { Lifecycle } from "../runtime/lifecycle.ts";
import { claimStorageClassName } from "../model/claim_class.ts";
import type { ProvisionControllerOptions } from "./context.ts";
import { intentKey } from "./intent/intent.ts";
import { createProvisionMetrics } from "./metrics.ts";
import { provisionControllerOptions, provisionerIdentity, raceOptions } from "./options.ts";
import { OwnershipRace } from "./race/ownership_race.ts";
import type { GetCapacityCsi } from "./race/get_capacity.ts";
import { createRaceMetrics } from "./race/metrics.ts";
import type { PublishedCapacities, RaceApi } from "./race/ports.ts";
import { wireProvisioning } from "./wiring.ts";

/** What provisioning is built from. */
interface ProvisioningParts {
  config: Config;
  driver: DriverInfo;
  claims: WatchedLookup<Claim> & Synced;
  classes: WatchedLookup<StorageClass> & Synced;
  volumes: ListedLookup<PersistentVolume> & Synced;
  api: ProvisionApi & RaceApi & Discovery;
  /** Start-up's calls to the API server, which wait while it is away. */
  startupCall: StartupCall;
  sources: DataSourceApi;
  csi: ProvisionCsi & GetCapacityCsi;
  /**
   * Every node's published capacity and this node's managed-by value
   * (--enable-capacity --capacity-for-immediate-binding): the race's
   * capacity-aware delays and its one summary per claim nobody can take.
   */
  published?: { capacities: PublishedCapacities; publisher: string };
  events: EventRecorder;
  journal: Journal;
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
  const identity = provisionerIdentity(driver.name, {
    nodeName: config.nodeName,
    now: Date.now(),
    random: Math.random(),
  });
  const options = provisionControllerOptions({ ...config, featureGates: gates }, driver, {
    identity,
  });
  const race = config.nodeDeploymentImmediateBinding
    ? startRace(parts, { queue, options, life })
    : undefined;
  const { controller, saver } = wireProvisioning({
    caches: { claims, classes, volumes: parts.volumes },
    api: parts.api,
    sources: parts.sources,
    csi: parts.csi,
    events: parts.events,
    metrics: createProvisionMetrics(parts.registry, {
      classExists: (name) => classes.get(name) !== undefined,
      bounds: parts.bounds,
    }),
    journal: parts.journal,
    logger,
    ...(race === undefined ? {} : { race }),
    saveQueue,
    retryClaim: (key) => queue.add(key),
  }, options);
  claims.onChange((change) => {
    race?.observe(change);
    queue.add(change.key);
  });
  classes.onChange((change) => {
    for (const claim of claims.list()) {
      if (claimStorageClassName(claim) === change.key) {
        queue.add(`${claim.metadata.namespace}/${claim.metadata.name}`);
      }
    }
  });
  return () => {
    const recovered = new Set(parts.journal.entries().map(intentKey));
    if (recovered.size > 0) {
      logger.notice(
        { intents: parts.journal.entries().length, claims: recovered.size },
        "Finishing or settling the volumes the journal names",
      );
    }
    for (const key of recovered) queue.add(key);
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

/** The race, its timers on the claim queue; they stop with the soft stop. */
function startRace(
  parts: ProvisioningParts,
  context: { queue: WorkQueue; options: ProvisionControllerOptions; life: Lifecycle },
): OwnershipRace {
  const { queue, life } = context;
  const race = new OwnershipRace(
    {
      claims: parts.claims,
      api: parts.api,
      csi: parts.csi,
      ...(parts.published === undefined ? {} : { capacities: parts.published.capacities }),
      sources: { api: parts.sources, claims: parts.api, volumes: parts.volumes },
      events: parts.events,
      metrics: createRaceMetrics(parts.registry),
      enqueue: (key) => queue.add(key),
      logger: parts.logger.child({ component: "race" }),
    },
    raceOptions(parts.config, parts.driver, {
      controller: context.options,
      publisher: parts.published?.publisher,
    }),
  );
  life.shutdown.signal.addEventListener("abort", () => race.close(), { once: true });
  return race;
}

/** As upstream: without the storage.k8s.io/v1 API, the gate is off unless set explicitly. */
async function volumeAttributesClassServed(
  parts: ProvisioningParts,
  config: Config,
): Promise<boolean> {
  if (config.featureGates.VolumeAttributesClassExplicit) return true;
  const served = await parts.startupCall(
    "the discovery of storage.k8s.io/v1 (VolumeAttributesClass)",
    () => parts.api.servesResource("storage.k8s.io/v1", "volumeattributesclasses"),
  );
  if (served) return true;
  parts.logger.notice("VolumeAttributesClass is not served by the API server: feature disabled");
  return false;
}
