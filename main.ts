/**
 * csi-node-provisioner, and its only composition root (ARCHITECTURE.md): builds the adapters
 * (lib/csi, lib/kube, lib/http) and hands them to provisioning, deletion and the capacity
 * publisher as their ports, then runs until a signal or a fatal condition. Exit codes: 0 after
 * a signal, 1 for a fatal error (e.g. the driver went away), 2 for bad flags or environment.
 */
import process from "node:process";
import { capacityDriverProblem, capacityOptions } from "./lib/capacity/options.ts";
import type { CapacityPublisher } from "./lib/capacity/publisher.ts";
import { refreshingCapacity } from "./lib/capacity/refresh.ts";
import { startCapacity } from "./lib/capacity/start.ts";
import { parseConfig } from "./lib/config/config.ts";
import { type ExplainRequest, parseExplainArgs } from "./lib/config/explain.ts";
import { problemsText } from "./lib/config/help.ts";
import type { Config } from "./lib/config/types.ts";
import { type CsiCaller, type CsiConnection, openCsiConnection } from "./lib/csi/connection.ts";
import { CsiController } from "./lib/csi/controller_service.ts";
import { describeDriver, type DriverInfo, handshake } from "./lib/csi/handshake.ts";
import { watchConnectionLoss } from "./lib/csi/watch.ts";
import { credentialProblem, explainClaim, failure } from "./lib/explain/run.ts";
import { startDeletion } from "./lib/delete/start.ts";
import { isThisNodesConcern } from "./lib/delete/volume_owner.ts";
import { Readiness } from "./lib/http/health.ts";
import { createMetrics, type Metrics } from "./lib/http/metrics.ts";
import { serveDiagnostics } from "./lib/http/serve.ts";
import { createCapacityCache, waitForSync } from "./lib/kube/caches.ts";
import { connectKube, type KubeConnection } from "./lib/kube/cluster.ts";
import { type KubeCredentials, loadCredentials } from "./lib/kube/credentials.ts";
import { ExplainReader } from "./lib/kube/explain_reads.ts";
import { createKubeRest } from "./lib/kube/rest.ts";
import { StorageCapacityClient } from "./lib/kube/storage_capacity.ts";
import { createLogger, type Logger } from "./lib/log/logger.ts";
import { startProvisioning } from "./lib/provision/start.ts";
import { createWorkQueueMetrics, type WorkQueueMetrics } from "./lib/queue/prometheus_metrics.ts";
import { FatalError } from "./lib/runtime/fatal.ts";
import { Lifecycle } from "./lib/runtime/lifecycle.ts";
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
  if (argv[0] === "explain") return await explain(argv.slice(1), env);
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
  const logger = createLogger({
    verbosity: config.verbosity,
    format: config.loggingFormat === "json" ? "json" : "text",
    base: { node: config.nodeName },
  });
  const agent = assemble(config, logger);
  const { life, connection } = agent;
  const untrap = life.trapSignals();
  try {
    const driver = await handshake(connection, { logger, signal: life.shutdown.signal });
    logger.notice(
      { version: VERSION, ...describeDriver(driver) },
      "Connected to CSI driver; using its topology segment as this node's fixed topology",
    );
    const capacityProblem = config.enableCapacity ? capacityDriverProblem(driver) : undefined;
    if (capacityProblem !== undefined) throw new FatalError(capacityProblem);
    agent.readiness.set("csi", true);
    await startControllers(agent, { driver, env });
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
  const readiness = new Readiness();
  readiness.require("csi", "CSI driver handshake not done");
  readiness.require("informers", "informers not synced");
  if (config.httpEndpoint !== "") {
    const http = serveDiagnostics(config, { metrics, readiness, csi: connection });
    life.onClose(() => http.close());
    logger.info({ endpoint: config.httpEndpoint, port: http.port }, "Serving metrics and health");
  }
  return { config, logger, metrics, readiness, connection, life };
}

/** The cluster's adapters, and the controllers on top of them. */
async function startControllers(
  agent: Agent,
  options: { driver: DriverInfo; env: Record<string, string | undefined> },
) {
  const { config, life, logger } = agent;
  const { driver } = options;
  const kube = await connectKube({
    config,
    env: options.env,
    userAgent: `${PROGRAM}/${VERSION}`,
    component: `${driver.name}_${config.nodeName}`,
    keepVolume: (pv) =>
      isThisNodesConcern(pv, { driverName: driver.name, segment: driver.segment }),
    logger,
  });
  life.onClose(() => kube.rest.close());
  life.track(kube.events.run(life.halt.signal), { final: true });
  const queues = createWorkQueueMetrics(agent.metrics.registry);
  let csi: CsiCaller = agent.connection;
  if (config.enableCapacity) {
    csi = refreshingCapacity(csi, await startPublisher(agent, { driver, kube, queues }));
  }
  const { informers, api, events } = kube;
  const { registry } = agent.metrics;
  const controllerCalls = new CsiController(csi);
  const shared = { config, driver, api, events, registry, queues, logger, csi: controllerCalls };
  const claims = await startProvisioning({ ...shared, ...informers }, life);
  const volumes = startDeletion({
    ...shared,
    volumes: informers.volumes,
    classes: informers.classes,
    watchAttachments: () => kube.watchAttachments(driver.name),
  }, life);
  // Only now: every handler is registered, so none misses the objects of the first list.
  for (const informer of Object.values(informers)) life.track(informer.run(life.shutdown.signal));
  const started = performance.now();
  if (!(await waitForSync(Object.values(informers), life.shutdown.signal))) return;
  agent.readiness.set("informers", true);
  const counts = { claims: informers.claims.size, volumes: informers.volumes.size };
  logger.notice(
    { ms: Math.round(performance.now() - started), ...counts },
    "Informers synced; provisioning claims selected to this node and deleting its released volumes",
  );
  claims();
  volumes();
}

/** The capacity publisher (--enable-capacity), with its own client for writes. */
function startPublisher(
  agent: Agent,
  parts: { driver: DriverInfo; kube: KubeConnection; queues: WorkQueueMetrics },
): Promise<CapacityPublisher> {
  const { kube } = parts;
  const options = capacityOptions(agent.config, parts.driver);
  const logger = agent.logger.child({ component: "capacity" });
  const userAgent = `${PROGRAM}/${VERSION} capacity`;
  return startCapacity({
    options,
    reads: kube.api,
    classes: kube.informers.classes,
    objects: createCapacityCache(kube.rest, { ...options, logger }),
    csi: new CsiController(agent.connection),
    openClient: () =>
      new StorageCapacityClient(kube.credentials, { ...options.client, ...options, userAgent }),
    registry: agent.metrics.registry,
    queueMetrics: parts.queues,
    readiness: agent.readiness,
    logger,
  }, agent.life);
}

/** `explain [-n NS] CLAIM`: reads the cluster with the user's kubeconfig, prints why. */
async function explain(argv: readonly string[], env: Record<string, string | undefined>) {
  const parsed = parseExplainArgs(argv, env, { program: PROGRAM });
  switch (parsed.kind) {
    case "help":
      process.stdout.write(parsed.text);
      return 0;
    case "invalid":
      process.stderr.write(
        `${PROGRAM} explain: ${parsed.problem} (see ${PROGRAM} explain --help)\n`,
      );
      return 2;
    case "explain":
      break;
  }
  const { request } = parsed;
  let credentials: KubeCredentials;
  try {
    credentials = await loadCredentials({ ...request, env });
  } catch (error) {
    process.stderr.write(failure(PROGRAM, credentialProblem(error, request.kubeconfig)).stderr);
    return 1;
  }
  return await explainWith(credentials, request);
}

async function explainWith(credentials: KubeCredentials, request: ExplainRequest) {
  const rest = createKubeRest(credentials, {
    budget: { qps: 50, burst: 50 },
    userAgent: `${PROGRAM}/${VERSION} explain`,
  });
  try {
    const result = await explainClaim(new ExplainReader(rest), {
      namespace: request.namespace,
      name: request.claim,
      agentSelector: request.agentSelector,
      server: credentials.server,
      program: PROGRAM,
    });
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    return result.code;
  } finally {
    rest.close();
  }
}

if (import.meta.main) {
  // Exit explicitly: a stray handle in a dependency must not keep a stopped agent alive.
  main(process.argv.slice(2), process.env).then((code) => process.exit(code));
}
