/**
 * csi-node-provisioner: the composition root. Parses the configuration,
 * connects to the CSI driver and the API server, starts the informers, the
 * provisioning, deletion and capacity workers, serves diagnostics, and runs
 * until a signal or a fatal condition. Exit codes: 0 after a signal, 1 for a
 * fatal error (e.g. the driver went away), 2 for bad flags or environment.
 */
import process from "node:process";
import { startCapacityPublisher } from "./lib/capacity/assemble.ts";
import { capacityDriverProblem, capacityOptions } from "./lib/capacity/options.ts";
import { type CapacityPublisher, poolChanging } from "./lib/capacity/publisher.ts";
import { parseConfig } from "./lib/config/config.ts";
import type { Config } from "./lib/config/types.ts";
import { type CsiConnection, openCsiConnection } from "./lib/csi/connection.ts";
import { describeDriver, type DriverInfo, handshake } from "./lib/csi/handshake.ts";
import type { CreateVolumeRequest, DeleteVolumeRequest } from "./lib/csi/types.ts";
import { watchConnectionLoss } from "./lib/csi/watch.ts";
import { createHttpApp } from "./lib/http/app.ts";
import { createLiveness, Readiness } from "./lib/http/health.ts";
import { createMetrics, type Metrics } from "./lib/http/metrics.ts";
import { boundApi, servesResource } from "./lib/kube/api.ts";
import {
  createAttachmentCache,
  createProvisioningCaches,
  type ProvisioningCaches,
  waitForSync,
} from "./lib/kube/caches.ts";
import { type KubeCredentials, loadCredentials } from "./lib/kube/credentials.ts";
import { EventSender } from "./lib/kube/events.ts";
import { createKubeRest, type KubeRest } from "./lib/kube/rest.ts";
import { createLogger, type Logger } from "./lib/log/logger.ts";
import { claimStorageClassName } from "./lib/provision/claim_class.ts";
import { ProvisionController } from "./lib/provision/controller.ts";
import { DeleteController } from "./lib/provision/delete_controller.ts";
import { createDeleteMetrics, createProvisionMetrics } from "./lib/provision/metrics.ts";
import { provisionControllerOptions, provisionerIdentity } from "./lib/provision/options.ts";
import { PvSaver } from "./lib/provision/pv_saver.ts";
import { isThisNodesConcern } from "./lib/provision/volume_owner.ts";
import { createWorkQueueMetrics, type WorkQueueMetrics } from "./lib/queue/prometheus_metrics.ts";
import {
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
} from "./lib/queue/rate_limiters.ts";
import { WorkQueue } from "./lib/queue/work_queue.ts";
import { type KeyHandler, runWorkers } from "./lib/queue/workers.ts";
import { FatalError } from "./lib/runtime/fatal.ts";
import { Lifecycle } from "./lib/runtime/lifecycle.ts";
import { serveHttp } from "./lib/runtime/platform.ts";
import { writeTerminationLog } from "./lib/runtime/termination_log.ts";
import { VERSION, versionText } from "./lib/runtime/version.ts";

const PROGRAM = "csi-node-provisioner";
/** Extra time, beyond the CSI deadline, that shutdown waits for work in flight. */
const DRAIN_MARGIN_MS = 2000;

/** Runs the agent with the given arguments and environment; resolves to the exit code. */
export async function main(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): Promise<number> {
  const outcome = parseConfig(argv, env, { program: PROGRAM });
  switch (outcome.kind) {
    case "help":
      process.stdout.write(outcome.text);
      return 0;
    case "version":
      process.stdout.write(`${PROGRAM} ${versionText()}\n`);
      return 0;
    case "invalid": {
      const count = outcome.problems.length === 1
        ? "1 problem"
        : `${outcome.problems.length} problems`;
      const lines = outcome.problems.map((problem) => `  - ${problem}\n`).join("");
      process.stderr.write(
        `${PROGRAM}: cannot start, ${count}:\n${lines}Run ${PROGRAM} --help for every flag.\n`,
      );
      return 2;
    }
    case "run":
      return await runAgent(outcome.config, env);
  }
}

/** What every part of the running agent shares. */
interface Agent {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  readiness: Readiness;
  connection: CsiConnection;
  life: Lifecycle;
}

async function runAgent(config: Config, env: Record<string, string | undefined>): Promise<number> {
  const logger = createLogger({ verbosity: config.verbosity, base: { node: config.nodeName } });
  const agent = assemble(config, logger);
  const untrap = agent.life.trapSignals();
  try {
    const driver = await handshake(agent.connection, {
      logger,
      signal: agent.life.shutdown.signal,
    });
    logger.notice(
      { version: VERSION, ...describeDriver(driver) },
      "Connected to CSI driver; using its topology segment as this node's fixed topology",
    );
    const capacityProblem = config.enableCapacity ? capacityDriverProblem(driver) : undefined;
    if (capacityProblem !== undefined) throw new FatalError(capacityProblem);
    agent.readiness.set("csi", true);
    await startControllers(agent, { driver, env });
    const end = await watchConnectionLoss(agent.connection, agent.life.shutdown.signal);
    if (end === "lost") throw new FatalError("Lost connection to CSI driver, exiting");
  } catch (error) {
    if (!agent.life.shutdown.signal.aborted) {
      const message = (error as Error).message;
      logger.fatal({ err: error }, message);
      writeTerminationLog(message);
      await agent.life.close();
      return error instanceof FatalError ? error.exitCode : 1;
    }
  } finally {
    untrap();
  }
  await agent.life.stop({
    drainMs: config.timeoutMs + DRAIN_MARGIN_MS,
    drained: (deadline) => agent.connection.drained(deadline),
  });
  logger.notice("Stopped");
  return 0;
}

function assemble(config: Config, logger: Logger): Agent {
  const life = new Lifecycle(logger);
  const metrics = createMetrics();
  const connection = openCsiConnection(config.csiAddress, {
    timeoutMs: config.timeoutMs,
    logger: logger.child({ component: "csi" }),
    observer: metrics.csiCalls,
  });
  life.onClose(() => connection.close());
  const readiness = new Readiness();
  readiness.require("csi", "CSI driver handshake not done");
  readiness.require("informers", "informers not synced");
  const live = createLiveness(async () => {
    const response = await connection.call("Probe", {});
    if (response.ready !== null && !response.ready.value) {
      throw new Error("driver reports not ready");
    }
  });
  if (config.httpEndpoint !== "") {
    const app = createHttpApp({
      metricsPath: config.metricsPath,
      metrics: metrics.render,
      live,
      ready: () => readiness.report(),
    });
    const http = serveHttp(config.httpEndpoint, app.fetch);
    life.onClose(() => http.close());
    logger.info({ endpoint: config.httpEndpoint, port: http.port }, "Serving metrics and health");
  }
  return { config, logger, metrics, readiness, connection, life };
}

/** The parts every controller is built from. */
interface Parts {
  driver: DriverInfo;
  credentials: KubeCredentials;
  rest: KubeRest;
  caches: ProvisioningCaches;
  events: EventSender;
  queues: WorkQueueMetrics;
  capacity?: CapacityPublisher;
}

async function startControllers(
  agent: Agent,
  options: { driver: DriverInfo; env: Record<string, string | undefined> },
) {
  const { config, life } = agent;
  const credentials = await loadCredentials({
    kubeconfig: config.kubeconfig,
    master: config.master,
    env: options.env,
  });
  const rest = createKubeRest(credentials, {
    qps: config.kubeApiQps,
    burst: config.kubeApiBurst,
    userAgent: `${PROGRAM}/${VERSION}`,
  });
  life.onClose(() => rest.close());
  await checkVolumeAttributesClassApi(agent, rest);
  const driver = options.driver;
  const caches = createProvisioningCaches(rest, {
    nodeName: config.nodeName,
    keepVolume: (pv) =>
      isThisNodesConcern(pv, { driverName: driver.name, segment: driver.segment }),
    logger: agent.logger.child({ component: "informer" }),
  });
  const events = new EventSender(rest, {
    component: `${driver.name}_${config.nodeName}`,
    host: config.nodeName,
    logger: agent.logger.child({ component: "events" }),
  });
  life.track(events.run(life.halt.signal), { final: true });
  const parts: Parts = {
    driver,
    credentials,
    rest,
    caches,
    events,
    queues: createWorkQueueMetrics(agent.metrics.registry),
  };
  if (config.enableCapacity) parts.capacity = await startCapacity(agent, parts);
  for (const informer of Object.values(caches)) life.track(informer.run(life.shutdown.signal));
  const claims = startProvisioning(agent, parts);
  const volumes = startDeletion(agent, parts);
  const started = performance.now();
  if (!(await waitForSync(Object.values(caches), life.shutdown.signal))) return;
  agent.readiness.set("informers", true);
  agent.logger.notice(
    {
      ms: Math.round(performance.now() - started),
      claims: caches.claims.size,
      volumes: caches.volumes.size,
    },
    "Informers synced; provisioning claims selected to this node and deleting its released volumes",
  );
  claims();
  volumes();
}

async function checkVolumeAttributesClassApi(agent: Agent, rest: KubeRest): Promise<void> {
  const gates = agent.config.featureGates;
  if (!gates.VolumeAttributesClass || gates.VolumeAttributesClassExplicit) return;
  // As upstream: without the storage.k8s.io/v1 API, the gate is off unless set explicitly.
  if (await servesResource(rest, "storage.k8s.io/v1", "volumeattributesclasses")) return;
  agent.logger.notice("VolumeAttributesClass is not served by the API server: feature disabled");
  gates.VolumeAttributesClass = false;
}

/** A queue with its workers, started by the returned function once the caches synced. */
function workerPool(
  agent: Agent,
  pool: { queue: WorkQueue; name: string; handle: KeyHandler },
): () => void {
  const { life } = agent;
  return () =>
    life.track(
      runWorkers(pool.queue, {
        workers: agent.config.workerThreads,
        signal: life.shutdown.signal,
        logger: agent.logger.child({ component: pool.name }),
        // Workers stop taking keys on the soft stop; calls in flight get until the hard stop.
        handle: (key) => pool.handle(key, life.halt.signal),
      }).finally(() => pool.queue.shutDown()),
    );
}

function retryQueue(agent: Agent, parts: Parts, name: string): WorkQueue {
  const { retryIntervalStartMs, retryIntervalMaxMs } = agent.config;
  return new WorkQueue({
    rateLimiter: new ItemExponentialFailureRateLimiter(retryIntervalStartMs, retryIntervalMaxMs),
    metrics: parts.queues.forQueue(name),
  });
}

/** CSI calls that change the pool also refresh the published capacity. */
function csiCalls(agent: Agent, capacity: CapacityPublisher | undefined) {
  const call = <T>(run: () => Promise<T>) => poolChanging(run(), capacity);
  return {
    createVolume: (request: CreateVolumeRequest, signal?: AbortSignal) =>
      call(() => agent.connection.call("CreateVolume", request, signal ? { signal } : {})),
    deleteVolume: async (request: DeleteVolumeRequest, signal?: AbortSignal) => {
      await call(() => agent.connection.call("DeleteVolume", request, signal ? { signal } : {}));
    },
  };
}

function startProvisioning(agent: Agent, parts: Parts): () => void {
  const { config, life } = agent;
  const { driver, caches, rest } = parts;
  const queue = retryQueue(agent, parts, "claims");
  const saveQueue = new WorkQueue({
    rateLimiter: defaultControllerRateLimiter(),
    metrics: parts.queues.forQueue("unsavedpvs"),
  });
  const api = boundApi(rest);
  const saver = new PvSaver({
    api,
    events: parts.events,
    logger: agent.logger.child({ component: "pv-saver" }),
    queue: saveQueue,
  });
  const identity = provisionerIdentity(driver.name, {
    nodeName: config.nodeName,
    now: Date.now(),
    random: Math.random(),
  });
  const controller = new ProvisionController({
    caches,
    api,
    csi: csiCalls(agent, parts.capacity),
    events: parts.events,
    metrics: createProvisionMetrics(agent.metrics.registry),
    saver,
    logger: agent.logger.child({ component: "provision" }),
    ...(parts.capacity === undefined ? {} : { capacity: parts.capacity }),
  }, provisionControllerOptions(config, driver, { identity }));
  caches.claims.onChange((change) => queue.add(change.key));
  caches.classes.onChange((change) => {
    for (const claim of caches.claims.list()) {
      if (claimStorageClassName(claim) === change.key) {
        queue.add(`${claim.metadata.namespace}/${claim.metadata.name}`);
      }
    }
  });
  const workers = workerPool(agent, {
    queue,
    name: "claims",
    handle: (key, signal) => controller.sync(key, signal),
  });
  return () => {
    life.track(saver.run(life.halt.signal).finally(() => saveQueue.shutDown()), { final: true });
    workers();
  };
}

function startDeletion(agent: Agent, parts: Parts): () => void {
  const { driver, caches } = parts;
  const queue = retryQueue(agent, parts, "volumes");
  // As upstream: VolumeAttachments are watched only when the driver attaches volumes.
  const attachments = driver.controllerCapabilities.has("PUBLISH_UNPUBLISH_VOLUME")
    ? createAttachmentCache(parts.rest, {
      driverName: driver.name,
      logger: agent.logger.child({ component: "informer" }),
    })
    : undefined;
  const controller = new DeleteController({
    volumes: caches.volumes,
    classes: caches.classes,
    api: boundApi(parts.rest),
    csi: csiCalls(agent, parts.capacity),
    ...(attachments === undefined ? {} : { attachments }),
    events: parts.events,
    metrics: createDeleteMetrics(agent.metrics.registry),
    ...(parts.capacity === undefined ? {} : { capacity: parts.capacity }),
    logger: agent.logger.child({ component: "delete" }),
  }, { segment: driver.segment });
  caches.volumes.onChange((change) => queue.add(change.key));
  if (attachments !== undefined) {
    attachments.informer.onChange((change) => {
      const pv = (change.old ?? change.new)?.persistentVolumeName;
      if (pv !== undefined) queue.add(pv);
    });
    agent.life.track(attachments.informer.run(agent.life.shutdown.signal));
  }
  return workerPool(agent, {
    queue,
    name: "volumes",
    handle: (key, signal) => controller.sync(key, signal),
  });
}

/** The capacity publisher (--enable-capacity), with its own client for writes. */
async function startCapacity(agent: Agent, parts: Parts): Promise<CapacityPublisher> {
  const { config, life } = agent;
  agent.readiness.require("capacity", "CSIStorageCapacity not published yet");
  const { publisher, writes } = await startCapacityPublisher({
    options: capacityOptions(config, parts.driver),
    rest: parts.rest,
    writesClient: (limits) =>
      createKubeRest(parts.credentials, { ...limits, userAgent: `${PROGRAM}/${VERSION} capacity` }),
    csi: agent.connection,
    classes: parts.caches.classes,
    registry: agent.metrics.registry,
    queueMetrics: parts.queues,
    ready: (state) => agent.readiness.set("capacity", state),
    logger: agent.logger.child({ component: "capacity" }),
    signal: life.shutdown.signal,
  });
  life.onClose(() => writes.close());
  life.track(publisher.run(life.shutdown.signal));
  return publisher;
}

if (import.meta.main) {
  // Exit explicitly: a stray handle in a dependency must not keep a stopped agent alive.
  main(process.argv.slice(2), process.env).then((code) => process.exit(code));
}
