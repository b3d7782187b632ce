/**
 * The diagnostics HTTP surface: metrics, /healthz, /readyz. A Hono app with no
 * listener of its own; lib/runtime/platform.ts serves it, tests call
 * app.request() in-process.
 */
import { Hono } from "hono";
import type { HealthReport } from "./health.ts";

/** What the HTTP surface reads from. */
interface HttpSources {
  metricsPath: string;
  metrics: () => Promise<{ body: string; contentType: string }>;
  live: () => HealthReport;
  ready: () => HealthReport;
}

function healthResponse(report: HealthReport): Response {
  return new Response(report.lines.join("\n") + "\n", {
    status: report.ok ? 200 : 503,
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

/** Builds the app. */
export function createHttpApp(sources: HttpSources): Hono {
  const app = new Hono();
  app.get(sources.metricsPath, async () => {
    const { body, contentType } = await sources.metrics();
    return new Response(body, { headers: { "content-type": contentType } });
  });
  app.get("/healthz", () => healthResponse(sources.live()));
  app.get("/readyz", () => healthResponse(sources.ready()));
  return app;
}
