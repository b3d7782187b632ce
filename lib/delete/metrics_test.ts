/** controller_persistentvolume_delete_*: the class label is a class that exists, else "other". */
import { ok } from "node:assert/strict";
import { Registry } from "prom-client";
import { createDeleteMetrics } from "./metrics.ts";

Deno.test("delete metrics label a PV's class as other once it does not exist", async () => {
  const registry = new Registry();
  const metrics = createDeleteMetrics(registry, { classExists: (name) => name === "fast" });
  metrics.deleted("fast", 0.2);
  metrics.deleted("deleted-class", 0.2);
  metrics.failed("");
  const text = await registry.metrics();
  ok(text.includes('controller_persistentvolume_delete_total{class="fast"} 1'), text);
  ok(text.includes('controller_persistentvolume_delete_total{class="other"} 1'), text);
  ok(text.includes('controller_persistentvolume_delete_duration_seconds_count{class="other"} 1'));
  ok(text.includes('controller_persistentvolume_delete_failed_total{class="other"} 1'), text);
  ok(!text.includes("deleted-class"));
});
