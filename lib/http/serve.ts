/**
 * Serves the diagnostics (metrics, /healthz with a CSI Probe round trip,
 * /readyz) on --http-endpoint with the runtime's HTTP server.
 */
import type { CsiCaller } from "../csi/connection.ts";
import { type HttpListener, serveHttp } from "../runtime/platform.ts";
import { createHttpApp } from "./app.ts";
import { createLiveness, type Readiness } from "./health.ts";
import type { Metrics } from "./metrics.ts";

/** Starts the listener; the caller closes it on the way out. */
export function serveDiagnostics(
  flags: { httpEndpoint: string; metricsPath: string },
  sources: { metrics: Metrics; readiness: Readiness; csi: CsiCaller },
): HttpListener {
  const live = createLiveness(async () => {
    const response = await sources.csi.call("Probe", {});
    if (response.ready !== null && !response.ready.value) {
      throw new Error("driver reports not ready");
    }
  });
  const app = createHttpApp({
    metricsPath: flags.metricsPath,
    metrics: sources.metrics.render,
    live,
    ready: () => sources.readiness.report(),
  });
  return serveHttp(flags.httpEndpoint, app.fetch);
}
