/**
 * csi-node-provisioner: the composition root. Parses the configuration,
 * connects to the CSI driver, serves diagnostics, and runs until a signal or
 * a fatal condition. Exit codes: 0 after a signal, 1 for a fatal error
 * (e.g. the driver went away), 2 for bad flags or environment.
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
import { createLogger, type Logger } from "./lib/log/logger.ts";
import { FatalError } from "./lib/runtime/fatal.ts";
import { type HttpListener, serveHttp } from "./lib/runtime/platform.ts";
import { writeTerminationLog } from "./lib/runtime/termination_log.ts";
import { VERSION } from "./lib/runtime/version.ts";

const PROGRAM = "csi-node-provisioner";

/** Extra time, beyond the CSI deadline, that shutdown waits for in-flight calls. */
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
  shutdown: AbortController;
}

async function runAgent(config: Config): Promise<number> {
  const logger = createLogger({ verbosity: config.verbosity, base: { node: config.nodeName } });
  const agent = assemble(config, logger);
  const stopSignals = trapSignals(agent);
  try {
    const driver = await handshake(agent.connection, { logger, signal: agent.shutdown.signal });
    announce(agent, driver);
    agent.readiness.set("csi", true);
    const end = await watchConnectionLoss(agent.connection, agent.shutdown.signal);
    if (end === "lost") throw new FatalError("Lost connection to CSI driver, exiting");
    return await stopGracefully(agent);
  } catch (error) {
    if (agent.shutdown.signal.aborted) return await stopGracefully(agent);
    const message = (error as Error).message;
    logger.fatal({ err: error }, message);
    writeTerminationLog(message);
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
    }).fetch,
  );
  if (http !== undefined) {
    logger.info({ endpoint: config.httpEndpoint, port: http.port }, "Serving metrics and health");
  }
  return { config, logger, metrics, readiness, connection, http, shutdown: new AbortController() };
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

function trapSignals(agent: Agent): () => void {
  const onSignal = (signal: string) => {
    if (agent.shutdown.signal.aborted) {
      agent.logger.warn({ signal }, "Second signal: exiting without waiting");
      process.exit(1);
    }
    agent.logger.notice({ signal }, "Shutting down: no new work, waiting for CSI calls in flight");
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
  const deadline = Date.now() + agent.config.timeoutMs + DRAIN_MARGIN_MS;
  const drained = await agent.connection.drained(deadline);
  if (!drained) {
    agent.logger.warn(
      { inFlight: agent.connection.inFlight() },
      "CSI calls still in flight at the deadline",
    );
  }
  await release(agent);
  agent.logger.notice("Stopped");
  return 0;
}

async function release(agent: Agent): Promise<void> {
  agent.connection.close();
  await agent.http?.close();
}

if (import.meta.main) {
  // Exit explicitly: a stray handle in a dependency must not keep a stopped agent alive.
  main(process.argv.slice(2), process.env).then((code) => process.exit(code));
}
