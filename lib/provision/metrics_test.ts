/**
 * controller_persistentvolumeclaim_provision_*: a tenant's claim naming a
 * class that does not exist, or a data source kind of its own, adds no
 * series of its own.
 */
import { ok } from "node:assert/strict";
import { Registry } from "prom-client";
import { createProvisionMetrics } from "./metrics.ts";

Deno.test("provision metrics label classes that do not exist and unknown source kinds as other", async () => {
  const registry = new Registry();
  const metrics = createProvisionMetrics(registry, { classExists: (name) => name === "fast" });
  metrics.failed({ class: "tenant-made-1", source: "" });
  metrics.failed({ class: "", source: "Tenant.Kind" });
  metrics.failed({ class: "fast", source: "VolumeSnapshot" });
  metrics.succeeded({ class: "gone", source: "PersistentVolumeClaim" }, 0.5);
  const text = await registry.metrics();
  const failed = "controller_persistentvolumeclaim_provision_failed_total";
  ok(text.includes(`${failed}{class="other",source=""} 1`), text);
  ok(text.includes(`${failed}{class="other",source="other"} 1`), text);
  ok(text.includes(`${failed}{class="fast",source="VolumeSnapshot"} 1`), text);
  ok(
    text.includes(
      'controller_persistentvolumeclaim_provision_total{class="other",source="PersistentVolumeClaim"} 1',
    ),
    text,
  );
  ok(
    text.includes(
      'controller_persistentvolumeclaim_provision_duration_seconds_count{class="other",source="PersistentVolumeClaim"} 1',
    ),
    text,
  );
  ok(!/tenant-made|Tenant\.Kind|"gone"/.test(text), "no value a tenant chose");
});
