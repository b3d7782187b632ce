import { ok, strictEqual } from "node:assert/strict";
import { createHttpApp } from "./app.ts";
import { createMetrics } from "./metrics.ts";

Deno.test("the HTTP app serves metrics at --metrics-path and health at /healthz and /readyz", async () => {
  const metrics = createMetrics({ processMetrics: false });
  metrics.csiCalls.observe({
    driverName: "d",
    method: "/csi.v1.Identity/Probe",
    code: "OK",
    seconds: 0.01,
  });
  let ready = false;
  const app = createHttpApp({
    metricsPath: "/custom-metrics",
    metrics: metrics.render,
    live: () => ({ ok: true, lines: ["heartbeat: ok"] }),
    ready: () => ({ ok: ready, lines: [`csi: ${ready ? "ok" : "handshake not done"}`] }),
  });
  const scrape = await app.request("/custom-metrics");
  strictEqual(scrape.status, 200);
  ok(
    (await scrape.text()).includes(
      'csi_sidecar_operations_seconds_bucket{le="0.1",driver_name="d",method_name="/csi.v1.Identity/Probe",grpc_status_code="OK"} 1',
    ),
  );
  strictEqual((await app.request("/metrics")).status, 404);
  strictEqual((await app.request("/healthz")).status, 200);
  const notReady = await app.request("/readyz");
  strictEqual(notReady.status, 503);
  strictEqual(await notReady.text(), "csi: handshake not done\n");
  ready = true;
  strictEqual((await app.request("/readyz")).status, 200);
});
