/**
 * csi-node-provisioner, and its only composition root (ARCHITECTURE.md): builds the adapters
 * (lib/csi, lib/kube, lib/http) and hands them to provisioning, deletion and the capacity
 * publisher as their ports, then runs until a signal or a fatal condition. Exit codes: 0 after
 * a signal, 1 for a fatal error (e.g. the driver went away), 2 for bad flags or environment.
 */
import { basename } from "node:path";
import process from "node:process";
import { managedByLabel, nodeLabels } from "./lib/model/labels.ts";
import {
  capacityOptions,
  readsPublishedCapacity,
  refuseCapacityProblems,
} from "./lib/capacity/options.ts";
import { startProtection } from "./lib/clone/start.ts";
import { centralResizerProblem } from "./lib/resize/central.ts";
import { startResizer } from "./lib/resize/start.ts";
import type { CapacityPublisher } from "./lib/capacity/publish/publisher.ts";
import { refreshingCapacity } from "./lib/capacity/publish/refresh.ts";
import { startCapacity } from "./lib/capacity/start.ts";
import { startLiveness } from "./lib/liveness/start.ts";
import type { LeaseWatch } from "./lib/liveness/watch.ts";
import {
  ANN_LEASE_SEGMENT,
  goneSinceNotes,
  LEASE_DURATION_SECONDS,
  leaseLabels,
  leaseName,
} from "./lib/model/lease.ts";
import { LostVolumeHandler } from "./lib/delete/lost/act.ts";
import { createLostMetrics, type LostMetrics } from "./lib/delete/lost/metrics.ts";
import { startNodeLoss } from "./lib/delete/lost/start.ts";
import { checkVolumesOnDriver } from "./lib/delete/lost/driver_check.ts";
import { parseConfig } from "./lib/config/config.ts";
import { problemsText } from "./lib/config/help.ts";
import type { Config } from "./lib/config/types.ts";
import { type CsiCaller, type CsiConnection, openCsiConnection } from "./lib/csi/connection.ts";
import { CsiController } from "./lib/csi/controller_service.ts";
import { DriverProbe } from "./lib/csi/driver_probe.ts";
import { describeDriver, type DriverInfo, handshake } from "./lib/csi/handshake.ts";
import { watchConnectionLoss } from "./lib/csi/watch.ts";
import { explainProgram, isKubectlPlugin, kubectlPluginProgram } from "./lib/explain/program.ts";
import { startDeletion } from "./lib/delete/start.ts";
import { thisNodesConcern } from "./lib/delete/volume_owner.ts";
import { livenessReport, Readiness } from "./lib/http/health.ts";
import { createMetrics, type Metrics } from "./lib/http/metrics.ts";
import { serveDiagnostics } from "./lib/http/serve.ts";
import type { PublishedCapacityCache } from "./lib/kube/caches.ts";
import { connectKube, type KubeConnection } from "./lib/kube/cluster.ts";
import { type StartupCall, startupRetry } from "./lib/kube/rest/startup_retry.ts";
import { registerInformerMetrics } from "./lib/kube/informer/metrics.ts";
import { StorageCapacityClient } from "./lib/kube/storage_capacity.ts";
import { createResizeClaimCache, readResizerLease, ResizeWrites } from "./lib/kube/resize.ts";
import type { Informer } from "./lib/kube/informer/informer.ts";
import { parseQuantity } from "./lib/model/quantity.ts";
import type { StorageCapacity } from "./lib/model/storage_capacity.ts";
import { dumpJournal } from "./lib/journal/file/dump.ts";
import { journalPermissionProblem } from "./lib/journal/disk.ts";
import { JournalKeeper } from "./lib/journal/keeper.ts";
import { createJournalMetrics } from "./lib/journal/metrics.ts";
import { createLogger, type Logger } from "./lib/log/logger.ts";
import { type Intent, INTENT_JOURNAL_SHAPE } from "./lib/provision/intent/intent.ts";
import { startProvisioning } from "./lib/provision/start.ts";
import {
  createWorkQueueMetrics,
  type WorkQueueMetrics,
} from "./lib/queue/work/prometheus_metrics.ts";
import { boundedMetrics, type BoundFactory } from "./lib/queue/bounded_metrics.ts";
import { waitForSync } from "./lib/runtime/synced.ts";
import { templateAnnotationKeys } from "./lib/secrets/references.ts";
import { FatalError } from "./lib/runtime/fatal.ts";
import { Heartbeat, HEARTBEAT_STALE_MS } from "./lib/runtime/heartbeat.ts";
import { DRAIN_MARGIN_MS, Lifecycle } from "./lib/runtime/lifecycle.ts";
import type { PeriodicCollection } from "./lib/runtime/collection.ts";
import { loggedCollection } from "./lib/runtime/collection_log.ts";
import { writeTerminationLog } from "./lib/runtime/termination_log.ts";
import { VERSION, versionText } from "./lib/runtime/version.ts";

const PROGRAM = "csi-node-provisioner";

/**
 * Runs the agent with the given arguments and environment, or `explain`: as
 * the subcommand, or as the kubectl plugin when called by the plugin's file
 * name (`invokedAs`, the base name of argv[0]); resolves to the exit code.
 */
export async function main(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  invokedAs: string = PROGRAM,
): Promise<number> {
  if (isKubectlPlugin(invokedAs)) {
    return await kubectlPluginProgram(argv, env, { program: PROGRAM, version: VERSION });
  }
  if (argv[0] === "explain") {
    return await explainProgram(argv.slice(1), env, { program: PROGRAM, version: VERSION });
  }
  const outcome = parseConfig(argv, env, { program: PROGRAM });
  switch (outcome.kind) {
    case "help":
      process.stdout.write(outcome.text);
      return 0;
    case "version":
      process.stdout.write(`${PROGRAM} ${versionText()}\n`);
      return 0;
    case "invalid":
      process.stderr.write(problemsText(PROGRAM, outcome.problems));
      return 2;
    case "journalDump":
      return await dumpJournal(outcome.path, {
        ...INTENT_JOURNAL_SHAPE,
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
      });
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
  heartbeat: Heartbeat;
  /** Full collections of the heap; undefined where the runtime offers none (Deno in development). */
  collection: PeriodicCollection | undefined;
  /** Observers of every bounded memo, reporting into the registry. */
  bounds: BoundFactory;
}

async function runAgent(config: Config, env: Record<string, string | undefined>): Promise<number> {
  const logger = createLogger({
    verbosity: config.verbosity,
    format: config.loggingFormat === "json" ? "json" : "text",
    base: { node: config.nodeName },
  });
  const agent = assemble(config, logger);
  const { life, connection } = agent;
  const untrap = life.trapSignals();
  agent.heartbeat.start(life.halt.signal);
  if (agent.collection) {
    life.track(agent.collection.run(life.shutdown.signal), { name: "full collection" });
  }
  life.track(agent.readiness.run(life.shutdown.signal), { name: "readiness" });
  try {
    const journal = await keepJournal(agent);
    const driver = await handshake(connection, { logger, signal: life.shutdown.signal });
    logger.notice(
      { version: VERSION, ...describeDriver(driver) },
      "Connected to CSI driver; using its topology segment as this node's fixed topology",
    );
    refuseCapacityProblems(config, driver);
    watchDriver(agent);
    await startControllers(agent, { driver, env, journal });
    const end = await watchConnectionLoss(connection, life.shutdown.signal);
    if (end === "lost") throw new FatalError("Lost connection to CSI driver, exiting");
  } catch (error) {
    if (!life.shutdown.signal.aborted) {
      const message = (error as Error).message;
      logger.fatal({ err: error }, message);
      writeTerminationLog(message);
      await life.close();
      return error instanceof FatalError ? error.exitCode : 1;
    }
  } finally {
    untrap();
  }
  const drained = (deadline: number) => connection.drained(deadline);
  await life.stop({ drainMs: config.timeoutMs + DRAIN_MARGIN_MS, drained });
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
  const readiness = new Readiness({
    logger: logger.child({ component: "readiness" }),
    onChange: metrics.readyCondition,
  });
  readiness.require("csi", "CSI driver handshake not done");
  readiness.require("informers", "informers not started");
  const heartbeat = new Heartbeat();
  if (config.httpEndpoint !== "") {
    const live = () =>
      livenessReport({
        heartbeat: () => heartbeat.status(),
        staleMs: HEARTBEAT_STALE_MS,
        loops: () => life.loops(),
      });
    const http = serveDiagnostics(config, { metrics, readiness, live });
    life.onClose(() => http.close());
    logger.info({ endpoint: config.httpEndpoint, port: http.port }, "Serving metrics and health");
  }
  const bounds = boundedMetrics(metrics.registry);
  const collection = loggedCollection(logger);
  return { config, logger, metrics, readiness, connection, life, heartbeat, collection, bounds };
}

/** The driver's health from now on: a background Probe feeding readiness, a gauge and logs. */
function watchDriver(agent: Agent): void {
  const probe = new DriverProbe(agent.connection, {
    logger: agent.logger.child({ component: "csi" }),
    onChange: agent.metrics.driverReady,
  });
  agent.readiness.set("csi", () => probe.readiness());
  const { shutdown, halt } = agent.life;
  agent.life.track(probe.run(shutdown.signal, halt.signal), { name: "driver probe" });
}

/**
 * The intent journal's keeper: it waits for the journal's lock, opens the
 * file and heals failed writes in the background, and never ends the agent;
 * readiness says why while no volume can be created. Only a directory this
 * process may not write is refused at once: a configuration error no retry
 * heals (exit code 2, as for a bad flag).
 */
async function keepJournal(agent: Agent): Promise<JournalKeeper<Intent>> {
  const path = agent.config.journalPath;
  const problem = await journalPermissionProblem(path);
  if (problem !== undefined) throw new FatalError(problem, { exitCode: 2 });
  const keeper = new JournalKeeper(path, {
    ...INTENT_JOURNAL_SHAPE,
    logger: agent.logger.child({ component: "journal" }),
    metrics: createJournalMetrics(agent.metrics.registry),
  });
  agent.readiness.set("journal", () => keeper.readiness());
  agent.life.track(keeper.run(agent.life.shutdown.signal), { name: "intent journal" });
  agent.life.onClose(() => keeper.close());
  return keeper;
}

/** The cluster's adapters, and the controllers on top of them. */
async function startControllers(
  agent: Agent,
  options: {
    driver: DriverInfo;
    env: Record<string, string | undefined>;
    journal: JournalKeeper<Intent>;
  },
) {
  const { config, life } = agent;
  const { driver } = options;
  const kube = await connectCluster(agent, options);
  const queues = createWorkQueueMetrics(agent.metrics.registry);
  let csi: CsiCaller = agent.connection;
  let ownCapacity: Informer<StorageCapacity> | undefined;
  // Every node's CSIStorageCapacity objects of the driver and the agents' Leases: the
  // withdrawal of a gone agent's capacity reads them, the Immediate binding race the first.
  const peers = config.enableCapacity ? watchPeers(agent, { driver, kube }) : undefined;
  const lost = lostVolumes(agent, kube);
  if (peers !== undefined) {
    const logger = agent.logger.child({ component: "capacity" });
    ownCapacity = kube.watchCapacity({ ...capacityOptions(config, driver), logger });
    const objects = ownCapacity;
    csi = refreshingCapacity(
      csi,
      await startPublisher(agent, { driver, kube, queues, peers, objects }),
    );
    watchLostNodes(agent, { driver, kube, peers, lost });
  }
  if (config.enableResizer) await refuseCentralResizer(agent, { driver, kube });
  const published = readsPublishedCapacity(config) ? peers?.published : undefined;
  const caches = [
    ...Object.values(kube.informers),
    ...(peers ? [peers.published.informer] : []),
  ];
  const work = await registerControllers(agent, {
    driver,
    kube,
    queues,
    csi,
    journal: options.journal,
    published,
    ownCapacity,
  });
  // Only now: every handler is registered, so none misses the objects of the first list.
  for (const informer of caches) {
    life.track(informer.run(life.shutdown.signal), { name: `${informer.resource} informer` });
  }
  // Every cache first (the race reads every node's published capacity too).
  const started = performance.now();
  if (!(await waitForSync(caches, life.shutdown.signal))) return;
  const counts = { claims: kube.informers.claims.size, volumes: kube.informers.volumes.size };
  agent.logger.notice(
    { ms: Math.round(performance.now() - started), ...counts },
    "Informers synced; provisioning claims selected to this node and deleting its released volumes",
  );
  for (const start of work.starts) start();
  checkDriverVolumes(agent, { driver, kube, lost });
  // Claims wait for the journal: until it is loaded its intents are unknown, so none may be created.
  const journal = options.journal;
  if (journal.journal === undefined) {
    agent.logger.warn({ journal: journal.path }, "Provisioning waits for the intent journal");
  }
  void journal.opened(life.shutdown.signal).then((opened) => opened && work.claims());
  // Says once, at start-up, when restores cannot work for lack of the CRDs.
  if (driver.controllerCapabilities.has("CREATE_DELETE_SNAPSHOT")) {
    await kube.api.snapshotsServed().catch(() => undefined);
  }
}

/** The API server connection, its informers' health in readiness and metrics, the Event sender. */
async function connectCluster(
  agent: Agent,
  options: { driver: DriverInfo; env: Record<string, string | undefined> },
): Promise<KubeConnection> {
  const { config, life, logger } = agent;
  const { driver } = options;
  const kube = await connectKube({
    config,
    env: options.env,
    userAgent: `${PROGRAM}/${VERSION}`,
    component: `${driver.name}_${config.nodeName}`,
    driverName: driver.name,
    templateKeys: templateAnnotationKeys,
    keepVolume: thisNodesConcern({ driverName: driver.name, segment: driver.segment }),
    volumeLabels: nodeLabels(driver.name, config.nodeName),
    logger,
    bounds: agent.bounds,
  });
  life.onClose(() => kube.rest.close());
  const { informerHealth } = kube;
  registerInformerMetrics(agent.metrics.registry, informerHealth);
  agent.readiness.set(
    "informers",
    () => informerHealth.readiness(Date.now(), config.readinessWindowMs),
  );
  life.track(kube.events.run(life.halt.signal), { final: true, name: "event sender" });
  return kube;
}

/**
 * Provisioning, source protection and deletion, with their informer handlers
 * registered (before any informer runs); returns the starts of their
 * workers, for once the caches have synced.
 */
async function registerControllers(agent: Agent, parts: {
  driver: DriverInfo;
  kube: KubeConnection;
  queues: WorkQueueMetrics;
  csi: CsiCaller;
  journal: JournalKeeper<Intent>;
  published: PublishedCapacityCache | undefined;
  ownCapacity: Informer<StorageCapacity> | undefined;
}): Promise<{ claims: () => void; starts: (() => void)[] }> {
  const { config, life, logger } = agent;
  const { driver, kube, queues, published } = parts;
  const { informers, api, events } = kube;
  const shared = {
    config,
    driver,
    api,
    events,
    registry: agent.metrics.registry,
    queues,
    logger,
    bounds: agent.bounds,
    csi: new CsiController(parts.csi),
  };
  const claims = await startProvisioning({
    ...shared,
    ...informers,
    startupCall: startupCall(agent),
    sources: api,
    journal: parts.journal,
    ...(published === undefined ? {} : {
      published: { capacities: published, publisher: managedByLabel(config.nodeName) },
    }),
  }, life);
  const protection = startProtection({
    config,
    driver,
    claims: informers.claims,
    volumes: informers.volumes,
    api,
    openSnapshotCache: () => kube.watchProtectedSnapshots(),
    queues,
    logger,
  }, life);
  const volumes = startDeletion({
    ...shared,
    volumes: informers.volumes,
    classes: informers.classes,
    watchAttachments: () => kube.watchAttachments(driver.name),
  }, life);
  const resizer = resizes(driver, agent) ? startResize(agent, shared, parts) : undefined;
  return { claims, starts: [volumes, protection, ...(resizer ? [resizer] : [])] };
}

/** --enable-resizer with a driver that can expand volumes; says why not otherwise. */
function resizes(driver: DriverInfo, agent: Agent): boolean {
  if (!agent.config.enableResizer) return false;
  if (driver.controllerCapabilities.has("EXPAND_VOLUME")) return true;
  agent.logger.warn(
    { driver: driver.name },
    "--enable-resizer: the driver has no EXPAND_VOLUME controller capability; no volume is expanded",
  );
  return false;
}

/** Volume expansion (--enable-resizer) over the claims of this node's PVs. */
function startResize(
  agent: Agent,
  shared: { csi: CsiController; events: KubeConnection["events"]; queues: WorkQueueMetrics },
  parts: {
    driver: DriverInfo;
    kube: KubeConnection;
    ownCapacity: Informer<StorageCapacity> | undefined;
  },
): () => void {
  const { kube, driver, ownCapacity } = parts;
  const { volumes, classes } = kube.informers;
  const writes = new ResizeWrites(kube.rest);
  return startResizer({
    config: agent.config,
    driver,
    watchClaims: () =>
      createResizeClaimCache(kube.rest, {
        isOurVolume: (name) => volumes.get(name) !== undefined,
        logger: agent.logger.child({ component: "informer" }),
        idleTimeoutMs: agent.config.watchIdleTimeoutMs,
      }),
    volumes,
    classes,
    api: {
      patchClaimStatus: (claim, patch, signal) => writes.patchClaimStatus(claim, patch, signal),
      patchVolumeCapacity: (name, size, signal) => writes.patchVolumeCapacity(name, size, signal),
      readSecretData: (ref, signal) => kube.api.readSecretData(ref, signal),
    },
    csi: shared.csi,
    events: shared.events,
    queues: shared.queues,
    ...(ownCapacity === undefined
      ? {}
      : { publishedFree: (name: string) => freeOf(ownCapacity, name) }),
    logger: agent.logger,
  }, agent.life);
}

/** The free bytes this node published for a class, if it did. */
function freeOf(objects: Informer<StorageCapacity>, className: string): bigint | undefined {
  const object = objects.list().find((candidate) => candidate.storageClassName === className);
  const parsed = object?.capacity === undefined ? undefined : parseQuantity(object.capacity);
  return parsed?.ok ? parsed.value : undefined;
}

/**
 * A central external-resizer of the same driver, alive by its Lease in the
 * agent's namespace, would expand the same claims: exit 2, as for a bad flag.
 */
async function refuseCentralResizer(
  agent: Agent,
  parts: { driver: DriverInfo; kube: KubeConnection },
): Promise<void> {
  const namespace = agent.config.namespace;
  if (namespace === "") {
    agent.logger.info("--enable-resizer: no NAMESPACE, so no external-resizer Lease is looked for");
    return;
  }
  const driverName = parts.driver.name;
  const lease = await startupCall(agent)(
    "read external-resizer's Lease",
    (signal) => readResizerLease(parts.kube.rest, { namespace, driverName }, signal),
  ).catch((error) => {
    agent.logger.warn({ err: error }, "--enable-resizer: external-resizer's Lease not checked");
    return undefined;
  });
  const problem = centralResizerProblem(lease && { ...lease, namespace }, Date.now());
  if (problem !== undefined) throw new FatalError(problem, { exitCode: 2 });
}

/** Start-up's calls to the API server: they wait while it is away, and /readyz says so. */
function startupCall(agent: Agent): StartupCall {
  return startupRetry({
    signal: agent.life.shutdown.signal,
    logger: agent.logger.child({ component: "startup" }),
    waiting: (reason) => agent.readiness.set("apiserver", reason ?? true),
  });
}

/** The other agents of the driver: their capacity objects and Leases; this agent's Lease renewed. */
interface Peers {
  published: PublishedCapacityCache;
  leases: LeaseWatch;
}

/** Creates the peers' informer and Lease watch (not started) and starts renewing this agent's Lease. */
function watchPeers(agent: Agent, parts: { driver: DriverInfo; kube: KubeConnection }): Peers {
  const { kube, driver } = parts;
  const { nodeName } = agent.config;
  const lease = kube.ownLease({
    name: leaseName(driver.name, nodeName),
    labels: leaseLabels(driver.name, nodeName),
    holder: nodeName,
    durationSeconds: LEASE_DURATION_SECONDS,
    annotations: driver.segment === null
      ? {}
      : { [ANN_LEASE_SEGMENT]: JSON.stringify(driver.segment) },
  });
  const logger = agent.logger.child({ component: "liveness" });
  const openLeases = () => kube.watchAgentLeases(driver.name);
  const lister = kube.agentLeases(driver.name);
  const leases = startLiveness({ lease, openLeases, lister, logger }, agent.life);
  return { published: kube.watchPublishedCapacity(driver.name), leases };
}

/** The handling of lost volumes, shared by the lost nodes' release and the start-up check. */
function lostVolumes(
  agent: Agent,
  kube: KubeConnection,
): { handler: LostVolumeHandler; metrics: LostMetrics } {
  const metrics = createLostMetrics(agent.metrics.registry);
  const handler = new LostVolumeHandler({
    api: kube.api,
    classes: kube.informers.classes,
    events: kube.events,
    metrics,
    logger: agent.logger.child({ component: "lost" }),
  });
  return { handler, metrics };
}

/** This node's volumes checked against the driver, once (the PV informer has synced). */
function checkDriverVolumes(
  agent: Agent,
  parts: {
    driver: DriverInfo;
    kube: KubeConnection;
    lost: { handler: LostVolumeHandler; metrics: LostMetrics };
  },
): void {
  const { driver } = parts;
  const logger = agent.logger.child({ component: "lost" });
  const check = checkVolumesOnDriver({
    csi: new CsiController(agent.connection),
    volumes: parts.kube.informers.volumes,
    handler: parts.lost.handler,
    metrics: parts.lost.metrics,
    logger,
  }, {
    name: driver.name,
    segment: driver.segment,
    capabilities: driver.controllerCapabilities,
    releaseOn: agent.config.nodeLossReleaseAfterMs > 0,
  }, agent.life.shutdown.signal).then(() => {}, (error) => {
    if (!agent.life.shutdown.signal.aborted) {
      logger.warn({ err: error }, "Cannot check this node's volumes against the CSI driver");
    }
  });
  agent.life.track(check, { name: "volume check", once: true });
}

/** On the Lease watchers: the clock of gone agents' deleted Nodes, and their volumes' release. */
function watchLostNodes(
  agent: Agent,
  parts: {
    driver: DriverInfo;
    kube: KubeConnection;
    peers: Peers;
    lost: { handler: LostVolumeHandler; metrics: LostMetrics };
  },
): void {
  const { kube, peers, driver } = parts;
  const releaseAfterMs = agent.config.nodeLossReleaseAfterMs;
  const leases = kube.agentLeases(driver.name);
  const informer = peers.published.informer;
  startNodeLoss({
    leases: peers.leases,
    publishers: {
      list: () => [...new Set(informer.list().map((object) => object.publisher))],
      hasSynced: () => informer.hasSynced(),
    },
    reads: {
      nodeExists: async (name, signal) => (await kube.api.readNodeUid(name, signal)) !== undefined,
      noteGoneSince: async (lease, sinceMs, signal) =>
        (await leases.annotate(lease, goneSinceNotes(sinceMs, releaseAfterMs), signal)) ===
          "updated",
      listVolumes: (signal) => kube.listVolumes(signal),
    },
    volumes: parts.lost.handler,
    metrics: parts.lost.metrics,
    logger: agent.logger.child({ component: "lost" }),
  }, {
    self: managedByLabel(agent.config.nodeName),
    driverName: driver.name,
    releaseAfterMs,
  }, agent.life);
}

/** The capacity publisher (--enable-capacity), with its own client for writes. */
function startPublisher(
  agent: Agent,
  parts: {
    driver: DriverInfo;
    kube: KubeConnection;
    queues: WorkQueueMetrics;
    peers: Peers;
    /** This node's CSIStorageCapacity objects (the informer, not started). */
    objects: Informer<StorageCapacity>;
  },
): Promise<CapacityPublisher> {
  const { kube, peers, objects } = parts;
  const options = capacityOptions(agent.config, parts.driver);
  const logger = agent.logger.child({ component: "capacity" });
  const userAgent = `${PROGRAM}/${VERSION} capacity`;
  return startCapacity({
    options,
    reads: kube.api,
    startupCall: startupCall(agent),
    classes: kube.informers.classes,
    objects,
    csi: new CsiController(agent.connection),
    openClient: () =>
      new StorageCapacityClient(kube.credentials, { ...options.client, ...options, userAgent }),
    registry: agent.metrics.registry,
    queueMetrics: parts.queues,
    readiness: agent.readiness,
    bounds: agent.bounds,
    events: kube.events,
    withdrawal: {
      agents: peers.leases,
      objects: {
        list: () => peers.published.informer.list(),
        hasSynced: () => peers.published.informer.hasSynced(),
      },
      withdrawAfterMs: agent.config.capacityWithdrawAfterMs,
      events: kube.events,
    },
    logger,
  }, agent.life);
}

if (import.meta.main) {
  // Exit explicitly: a stray handle in a dependency must not keep a stopped agent alive.
  // argv0 is the name the binary was called by (process.argv[0] is the runtime's); a symlink keeps it.
  main(process.argv.slice(2), process.env, basename(process.argv0)).then((code) =>
    process.exit(code)
  );
}
