/**
 * --enable-capacity at start-up: the storage.k8s.io/v1 CSIStorageCapacity
 * API must be served (Kubernetes 1.24 and newer; upstream probes it with an
 * invalid create in cmd/csi-provisioner and falls back to v1beta1, which this
 * agent does not speak) and the owner of the objects must be found; a
 * definitive failure of either ends the process with a clear message, while
 * an API server that does not answer is waited for. Then the
 * controller, its work queue and the publisher are put together from the
 * ports main.ts hands over, and run.
 */
import type { Registry } from "prom-client";
import type { Logger } from "../log/logger.ts";
import type { StorageClass } from "../model/objects.ts";
import type { StorageCapacity } from "../model/storage_capacity.ts";
import type { WorkQueueMetrics } from "../queue/work/prometheus_metrics.ts";
import { retryQueue } from "../queue/work/pool.ts";
import { FatalError } from "../runtime/fatal.ts";
import type { Lifecycle } from "../runtime/lifecycle.ts";
import { CapacityController } from "./controller.ts";
import { countObjects } from "./plan/desired.ts";
import { WriteEchoes } from "./publish/echoes.ts";
import { ForeignWrites, WRITES_LIMIT } from "./foreign_writes.ts";
import type { BoundFactory } from "../queue/bounded_metrics.ts";
import { createCapacityMetrics } from "./metrics.ts";
import { CAPACITY_API_MISSING, type CapacityOptions } from "./options.ts";
import { type OwnerChoice, resolveOwner } from "./owner_lookup.ts";
import { MANAGED_BY_LABEL } from "../model/keys.ts";
import { startWithdrawal } from "./withdraw/start.ts";
import type {
  AgentsLiveness,
  CapacityClient,
  CapacityCsi,
  CapacityObjects,
  CapacityOwner,
  CapacityStartReads,
  ClassLookup,
  EventRecorder,
  OwnerReads,
  PublishedObjects,
  Readiness,
  StartupCall,
  WatchedCache,
} from "./ports.ts";
import { CapacityPublisher } from "./publish/publisher.ts";

/** upstream's queue name, for the workqueue_* series. */
const CAPACITY_QUEUE_NAME = "csistoragecapacity";
/** The /readyz condition of the first round of publishing. */
const READINESS = "capacity";

/** What the publisher is built from. */
interface CapacityParts {
  options: CapacityOptions;
  /** Discovery and the owner's reads, through the main client. */
  reads: CapacityStartReads;
  /** Start-up's calls to the API server, which wait while it is away. */
  startupCall: StartupCall;
  /** The StorageClass informer provisioning runs; the publisher adds its handler. */
  classes: ClassLookup & WatchedCache<StorageClass>;
  /** The informer of this node's objects (label-selected, in NAMESPACE); the publisher runs it. */
  objects: CapacityObjects & WatchedCache<StorageCapacity> & {
    run(signal: AbortSignal): Promise<void>;
  };
  csi: CapacityCsi;
  /** Opens the capacity client once the checks passed; the publisher closes it when it stops. */
  openClient: () => CapacityClient & { close(): void };
  registry: Registry;
  /** The factory main.ts created for the registry (prom-client registers each family once). */
  queueMetrics: WorkQueueMetrics;
  readiness: Readiness;
  /** Observers of the bounded memos (csi_node_provisioner_bounded_*). */
  bounds?: BoundFactory;
  /** Where a second agent writing this node's objects is reported. */
  events?: EventRecorder;
  /** The withdrawal of gone agents' capacity, through the same client. */
  withdrawal?: {
    agents: AgentsLiveness;
    objects: PublishedObjects;
    withdrawAfterMs: number;
    events: EventRecorder;
  };
  logger: Logger;
}

/**
 * Checks, finds the owner, builds the publisher (its informer handlers are
 * registered) and runs it until the soft stop; readiness waits for its first
 * round. Returns the publisher, for the refresh decorator (publish/refresh.ts).
 */
export async function startCapacity(
  parts: CapacityParts,
  life: Lifecycle,
): Promise<CapacityPublisher> {
  const { options, logger } = parts;
  parts.readiness.require(READINESS, "CSIStorageCapacity not published yet");
  await requireCapacityApi(parts.reads, parts.startupCall);
  const signal = life.shutdown.signal;
  const owner = await findCapacityOwner(parts.reads, options.owner, {
    logger,
    call: parts.startupCall,
  });
  const client = parts.openClient();
  const scope = { desired: options.desired, segment: options.segment };
  const counts = () =>
    countObjects({ classes: parts.classes.list(), objects: parts.objects.list() }, scope);
  const metrics = createCapacityMetrics(parts.registry, counts);
  const echoes = new WriteEchoes();
  const foreign = new ForeignWrites({
    holdMs: options.pollIntervalMs,
    ...(parts.bounds ? { observer: parts.bounds("capacity_writes", WRITES_LIMIT) } : {}),
  });
  const controller = new CapacityController(
    {
      classes: parts.classes,
      objects: parts.objects,
      csi: parts.csi,
      client,
      owner,
      echoes,
      metrics,
      logger,
      foreign,
      ...(parts.events ? { events: parts.events } : {}),
    },
    { ...scope, labels: options.labels },
  );
  const queue = retryQueue(options.retry, parts.queueMetrics.forQueue(CAPACITY_QUEUE_NAME));
  const publisher = new CapacityPublisher({
    controller,
    queue,
    classes: parts.classes,
    objects: parts.objects,
    echoes,
    ready: (state) => parts.readiness.set(READINESS, state),
    release: () => client.close(),
    logger,
  }, {
    driverName: options.desired.driverName,
    workers: options.workers,
    pollIntervalMs: options.pollIntervalMs,
  });
  life.track(publisher.run(signal));
  if (parts.withdrawal !== undefined) {
    const { withdrawAfterMs, ...ports } = parts.withdrawal;
    startWithdrawal(
      { ...ports, client, registry: parts.registry, logger },
      { self: options.labels[MANAGED_BY_LABEL]!, namespace: options.namespace, withdrawAfterMs },
      life,
    );
  }
  return publisher;
}

/** Throws a FatalError when the API server lacks storage.k8s.io/v1 csistoragecapacities. */
export async function requireCapacityApi(
  reads: Pick<CapacityStartReads, "servesResource">,
  call: StartupCall,
): Promise<void> {
  const served = await call(
    "the discovery of storage.k8s.io/v1 (CSIStorageCapacity)",
    () => reads.servesResource("storage.k8s.io/v1", "csistoragecapacities"),
  );
  if (!served) throw new FatalError(CAPACITY_API_MISSING);
}

/** The owner the flags ask for; a FatalError when it cannot be found. */
export async function findCapacityOwner(
  reads: OwnerReads,
  choice: OwnerChoice,
  options: { logger: Logger; call: StartupCall },
): Promise<CapacityOwner> {
  const { logger } = options;
  try {
    return await options.call(
      "the lookup of the CSIStorageCapacity objects' owner",
      (signal) => resolveOwner(reads, choice, { logger, signal }),
    );
  } catch (error) {
    throw new FatalError((error as Error).message, { cause: error });
  }
}
