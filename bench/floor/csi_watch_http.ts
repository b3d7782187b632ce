/**
 * Runtime floor 3 (bench/floor.ts): floor 2 (csi_and_watch.ts: the CSI
 * connection with one call, one PVC watch, the logger) plus the diagnostics
 * every agent serves, through the agent's own modules: the metrics registry
 * (prom-client, with the process metrics and the CSI call histogram, which
 * observes the one call) and the HTTP endpoint (hono on the runtime's server),
 * scraped once before "ready" as the benchmarks scrape the agent. What it
 * costs above floor 2 is what the project's chosen HTTP and metrics libraries
 * cost, before any of the agent's own work (informers, queue, journal).
 *
 *   csi_watch_http CSI_ADDRESS KUBECONFIG
 */
import { openCsiConnection } from "../../lib/csi/connection.ts";
import { createHttpApp } from "../../lib/http/app.ts";
import { createMetrics } from "../../lib/http/metrics.ts";
import { createLogger } from "../../lib/log/logger.ts";
import { serveHttp } from "../../lib/runtime/platform.ts";
import { holdClaimWatch } from "./claim_watch.ts";

const HEALTHY = { ok: true, lines: ["floor: ok"] };

async function serveAndScrapeOnce(metrics: ReturnType<typeof createMetrics>): Promise<void> {
  const app = createHttpApp({
    metricsPath: "/metrics",
    metrics: metrics.render,
    live: () => HEALTHY,
    ready: () => HEALTHY,
  });
  const listener = serveHttp("127.0.0.1:0", app.fetch);
  const response = await fetch(`http://127.0.0.1:${listener.port}/metrics`);
  await response.text();
}

async function main(): Promise<void> {
  // As hello.ts: SIGTERM ends it as an exit, on which Bun writes its bytecode order.
  process.on("SIGTERM", () => process.exit(0));
  const [address = "", kubeconfig = ""] = process.argv.slice(2);
  const logger = createLogger({ verbosity: 0 });
  const metrics = createMetrics();
  const csi = openCsiConnection(address, {
    timeoutMs: 10_000,
    logger,
    observer: metrics.csiCalls,
  });
  await csi.call("GetPluginInfo", {});
  await serveAndScrapeOnce(metrics);
  await holdClaimWatch(kubeconfig);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
