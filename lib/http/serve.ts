/**
 * Serves the diagnostics (metrics, /healthz from the agent's own state,
 * /readyz) on --http-endpoint with the runtime's HTTP server.
 */
import { type HttpListener, serveHttp } from "../runtime/platform.ts";
import { createHttpApp } from "./app.ts";
import type { HealthReport, Readiness } from "./health.ts";
import type { Metrics } from "./metrics.ts";

/** Starts the listener; the caller closes it on the way out. */
export function serveDiagnostics(
  flags: { httpEndpoint: string; metricsPath: string },
  sources: { metrics: Metrics; readiness: Readiness; live: () => HealthReport },
): HttpListener {
  const app = createHttpApp({
    metricsPath: flags.metricsPath,
    metrics: sources.metrics.render,
    live: sources.live,
    ready: () => sources.readiness.report(),
  });
  return serveHttp(flags.httpEndpoint, app.fetch);
}
