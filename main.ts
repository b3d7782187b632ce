/**
 * csi-node-provisioner: the composition root. Parses the configuration,
 * connects to the CSI driver and the API server, starts the informers and
 * the provisioning workers, serves diagnostics, and runs until a signal or a
 * fatal condition. Exit codes: 0 after a signal, 1 for a fatal error (e.g.
 * the driver went away), 2 for bad flags or environment.
 */
import process from "node:process";
import { parseConfig } from "./lib/config/config.ts";
import type { Config } from "./lib/config/types.ts";
import { type CsiConnection, openCsiConnection } from "./lib/csi/connection.ts";
import { type DriverInfo, handshake } from "./lib/csi/handshake.ts";
import { watchConnectionLoss } from "./lib/csi/watch.ts";
import { createHttpApp } from "./lib/http/app.ts";
import { createLiveness, Readiness } from "./lib/http/health.ts";
import { createMetrics, type Metrics } from "./lib/http/metrics.ts";
import * as kubeApi from "./lib/kube/api.ts";
import { loadKubeConfig } from "./lib/kube/config.ts";
import { EventSender } from "./lib/kube/events.ts";
import { createProvisioningCaches, type ProvisioningCaches } from "./lib/kube/caches.ts";
import { createKubeRest, type KubeRest } from "./lib/kube/rest.ts";
import { createLogger, type Logger } from "./lib/log/logger.ts";
import { claimStorageClassName } from "./lib/provision/claim_class.ts";
import { ProvisionController } from "./lib/provision/controller.ts";
import { createProvisionMetrics } from "./lib/provision/metrics.ts";
import { provisionControllerOptions, provisionerIdentity } from "./lib/provision/options.ts";
import { PvSaver } from "./lib/provision/pv_saver.ts";
import { isThisNodesConcern } from "./lib/provision/volume_owner.ts";
import { createWorkQueueMetrics } from "./lib/queue/prometheus_metrics.ts";
import {
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
} from "./lib/queue/rate_limiters.ts";
import { WorkQueue } from "./lib/queue/work_queue.ts";
import { runWorkers } from "./lib/queue/workers.ts";
import { FatalError } from "./lib/runtime/fatal.ts";
import { type HttpListener, serveHttp } from "./lib/runtime/platform.ts";
import { sleep } from "./lib/runtime/sleep.ts";
import { writeTerminationLog } from "./lib/runtime/termination_log.ts";
import { VERSION } from "./lib/runtime/version.ts";

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
      process.stdout.write(`${PROGRAM} ${VERSION}\n`);
      return 0;
    case "invalid":
      process.stderr.write(describeProblems(outcome.problems));
      return 2;
    case "run":
      return await runAgent(outcome.config);
  }
}

function describeProblems(problems: string[]): string {
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  const lines = problems.map((problem) => `  - ${problem}`);
  return `${PROGRAM}: cannot start, ${count}:\n${
    lines.join("\n")
  }\nRun ${PROGRAM} --help for every flag.\n`;
}

/** The pieces that live for the whole run. */
interface Agent {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  readiness: Readiness;
  connection: CsiConnection;
  http: HttpListener | undefined;
  /** Soft stop: no new work. */
  shutdown: AbortController;
  /** Hard stop: cancels work still in flight after the drain deadline. */
  halt: AbortController;
  /** Loops that end on the soft stop (informers, claim workers). */
  loops: Promise<void>[];
  /** Loops that end on the hard stop (event sender, PV saver): they finish what the others left. */
  finalLoops: Promise<void>[];
  rest?: KubeRest;
}

async function runAgent(config: Config): Promise<number> {
  const logger = createLogger({ verbosity: config.verbosity, base: { node: config.nodeName } });
  const agent = assemble(config, logger);
  const stopSignals = trapSignals(agent);
  try {
    const driver = await handshake(agent.connection, { logger, signal: agent.shutdown.signal });
    announce(agent, driver);
    agent.readiness.set("csi", true);
    await startProvisioning(agent, driver);
    const end = await watchConnectionLoss(agent.connection, agent.shutdown.signal);
    if (end === "lost") throw new FatalError("Lost connection to CSI driver, exiting");
    return await stopGracefully(agent);
  } catch (error) {
    if (agent.shutdown.signal.aborted) return await stopGracefully(agent);
    const message = (error as Error).message;
    logger.fatal({ err: error }, message);
    writeTerminationLog(message);
    agent.shutdown.abort();
    agent.halt.abort();
    await release(agent);
    return error instanceof FatalError ? error.exitCode : 1;
  } finally {
    stopSignals();
  }
}

function assemble(config: Config, logger: Logger): Agent {
  const metrics = createMetrics();
  const connection = openCsiConnection(config.csiAddress, {
    timeoutMs: config.timeoutMs,
    logger: logger.child({ component: "csi" }),
    observer: metrics.csiCalls,
  });
  const readiness = new Readiness();
  readiness.require("csi", "CSI driver handshake not done");
  readiness.require("informers", "informers not synced");
  const live = createLiveness(async () => {
    const response = await connection.call("Probe", {});
    if (response.ready !== null && !response.ready.value) {
      throw new Error("driver reports not ready");
    }
  });
  const http = config.httpEndpoint === "" ? undefined : serveHttp(
    config.httpEndpoint,
    createHttpApp({
      metricsPath: config.metricsPath,
      metrics: metrics.render,
      live,
      ready: () => readiness.report(),
    })
      .fetch,
  );
  if (http !== undefined) {
    logger.info({ endpoint: config.httpEndpoint, port: http.port }, "Serving metrics and health");
  }
  const shutdown = new AbortController();
  return {
    config,
    logger,
    metrics,
    readiness,
    connection,
    http,
    shutdown,
    halt: new AbortController(),
    loops: [],
    finalLoops: [],
  };
}

function announce(agent: Agent, driver: DriverInfo): void {
  agent.logger.notice({
    version: VERSION,
    driver: driver.name,
    driverVersion: driver.vendorVersion,
    nodeId: driver.nodeId,
    segment: driver.segment,
    pluginCapabilities: [...driver.pluginCapabilities],
    controllerCapabilities: [...driver.controllerCapabilities],
  }, "Connected to CSI driver; using its topology segment as this node's fixed topology");
}

async function connectKube(agent: Agent): Promise<KubeRest> {
  const { config } = agent;
  const kubeConfig = loadKubeConfig({ kubeconfig: config.kubeconfig, master: config.master });
  const rest = await createKubeRest(kubeConfig, {
    qps: config.kubeApiQps,
    burst: config.kubeApiBurst,
    userAgent: `${PROGRAM}/${VERSION}`,
  });
  agent.rest = rest;
  if (
    config.featureGates.VolumeAttributesClass && !config.featureGates.VolumeAttributesClassExplicit
  ) {
    // As upstream: without the storage.k8s.io/v1 API, the gate is off unless set explicitly.
    const served = await kubeApi.servesResource(
      rest,
      "storage.k8s.io/v1",
      "volumeattributesclasses",
    );
    if (!served) {
      agent.logger.notice(
        "VolumeAttributesClass is not served by the API server: feature disabled",
      );
      config.featureGates.VolumeAttributesClass = false;
    }
  }
  return rest;
}

function createController(
  agent: Agent,
  parts: {
    rest: KubeRest;
    driver: DriverInfo;
    caches: ProvisioningCaches;
    events: EventSender;
    saver: PvSaver;
  },
): ProvisionController {
  const { rest, driver, caches } = parts;
  const identity = provisionerIdentity(driver.name, {
    nodeName: agent.config.nodeName,
    now: Date.now(),
    random: Math.random(),
  });
  return new ProvisionController({
    caches,
    api: {
      createPersistentVolume: (pv, signal) => kubeApi.createPersistentVolume(rest, pv, signal),
      readClaim: (key, signal) => kubeApi.readClaim(rest, key, signal),
      removeSelectedNode: (claim, signal) => kubeApi.removeSelectedNode(rest, claim, signal),
      readSecretData: (ref, signal) => kubeApi.readSecretData(rest, ref, signal),
      readVolumeAttributesClass: (name, signal) =>
        kubeApi.readVolumeAttributesClass(rest, name, signal),
    },
    csi: {
      createVolume: (request, signal) =>
        agent.connection.call("CreateVolume", request, signal ? { signal } : {}),
      deleteVolume: async (request, signal) => {
        await agent.connection.call("DeleteVolume", request, signal ? { signal } : {});
      },
    },
    events: parts.events,
    metrics: createProvisionMetrics(agent.metrics.registry),
    saver: parts.saver,
    logger: agent.logger.child({ component: "provision" }),
  }, provisionControllerOptions(agent.config, driver, { identity }));
}

/** Informers, event sender, PV saver and claim workers; resolves once the caches have synced. */
async function startProvisioning(agent: Agent, driver: DriverInfo): Promise<void> {
  const { config, metrics, shutdown, halt } = agent;
  const rest = await connectKube(agent);
  const queues = createWorkQueueMetrics(metrics.registry);
  const claimQueue = new WorkQueue({
    rateLimiter: new ItemExponentialFailureRateLimiter(
      config.retryIntervalStartMs,
      config.retryIntervalMaxMs,
    ),
    metrics: queues.forQueue("claims"),
  });
  const saveQueue = new WorkQueue({
    rateLimiter: defaultControllerRateLimiter(),
    metrics: queues.forQueue("unsavedpvs"),
  });
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
  const saver = new PvSaver({
    api: {
      createPersistentVolume: (pv, signal) => kubeApi.createPersistentVolume(rest, pv, signal),
    },
    events,
    logger: agent.logger.child({ component: "pv-saver" }),
    queue: saveQueue,
  });
  const controller = createController(agent, { rest, driver, caches, events, saver });
  caches.claims.onChange((change) => claimQueue.add(change.key));
  caches.classes.onChange((change) => {
    for (const claim of caches.claims.list()) {
      if (claimStorageClassName(claim) === change.key) {
        claimQueue.add(`${claim.metadata.namespace}/${claim.metadata.name}`);
      }
    }
  });
  for (const informer of Object.values(caches)) agent.loops.push(informer.run(shutdown.signal));
  agent.finalLoops.push(events.run(halt.signal));
  await waitForSync(agent, caches);
  agent.finalLoops.push(saver.run(halt.signal).finally(() => saveQueue.shutDown()));
  agent.loops.push(
    runWorkers(claimQueue, {
      workers: config.workerThreads,
      signal: shutdown.signal,
      logger: agent.logger.child({ component: "claims" }),
      // Workers stop taking claims on the soft stop; calls in flight get until the hard stop.
      handle: (key) => controller.sync(key, halt.signal),
    }).finally(() => claimQueue.shutDown()),
  );
}

async function waitForSync(agent: Agent, caches: ProvisioningCaches): Promise<void> {
  const started = performance.now();
  while (!Object.values(caches).every((informer) => informer.hasSynced())) {
    if (!(await sleep(50, agent.shutdown.signal))) {
      throw new FatalError("Shut down before the informers synced");
    }
  }
  agent.readiness.set("informers", true);
  agent.logger.notice({
    ms: Math.round(performance.now() - started),
    claims: caches.claims.size,
    storageClasses: caches.classes.size,
    volumes: caches.volumes.size,
  }, "Informers synced; provisioning claims selected to this node");
}

function trapSignals(agent: Agent): () => void {
  const onSignal = (signal: string) => {
    if (agent.shutdown.signal.aborted) {
      agent.logger.warn({ signal }, "Second signal: exiting without waiting");
      process.exit(1);
    }
    agent.logger.notice({ signal }, "Shutting down: no new work, waiting for work in flight");
    agent.shutdown.abort();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return () => {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  };
}

async function stopGracefully(agent: Agent): Promise<number> {
  agent.shutdown.abort();
  const deadline = Date.now() + agent.config.timeoutMs + DRAIN_MARGIN_MS;
  const halt = setTimeout(() => agent.halt.abort(), deadline - Date.now());
  await Promise.allSettled(agent.loops);
  const drained = await agent.connection.drained(deadline);
  if (!drained) {
    agent.logger.warn(
      { inFlight: agent.connection.inFlight() },
      "CSI calls still in flight at the deadline",
    );
  }
  agent.halt.abort();
  clearTimeout(halt);
  await release(agent);
  agent.logger.notice("Stopped");
  return 0;
}

async function release(agent: Agent): Promise<void> {
  await Promise.allSettled([...agent.loops, ...agent.finalLoops]);
  agent.rest?.close();
  agent.connection.close();
  await agent.http?.close();
}

if (import.meta.main) {
  // Exit explicitly: a stray handle in a dependency must not keep a stopped agent alive.
  main(process.argv.slice(2), process.env).then((code) => process.exit(code));
}
