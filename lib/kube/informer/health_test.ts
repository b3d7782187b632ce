import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Registry } from "prom-client";
import { type InformerHealth, InformerHealthSet } from "./health.ts";
import { registerInformerMetrics } from "./metrics.ts";

function health(overrides: Partial<InformerHealth>): InformerHealth {
  return {
    resource: "persistentvolumes",
    synced: true,
    up: true,
    objects: 3,
    restarts: { error: 0, expired: 0, idle_timeout: 0, stream_end: 0, relist: 0 },
    ...overrides,
  };
}

Deno.test("InformerHealthSet.readiness(): not listed yet, or failing longer than the window", () => {
  const states: InformerHealth[] = [health({})];
  const set = new InformerHealthSet();
  set.add({ health: () => states[0]! });
  strictEqual(set.readiness(100_000, 30_000), true);
  states[0] = health({ synced: false, lastError: "connection refused" });
  strictEqual(
    set.readiness(100_000, 30_000),
    "persistentvolumes not listed yet: connection refused",
  );
  states[0] = health({ up: false, failingSince: 80_000, lastError: "connection refused" });
  strictEqual(set.readiness(100_000, 30_000), true, "20 s of failure is within the window");
  strictEqual(
    set.readiness(111_000, 30_000),
    "persistentvolumes cannot list or watch for 31 s (connection refused)",
  );
});

Deno.test("informer metrics: up, objects, last list and event, restarts by reason", async () => {
  const set = new InformerHealthSet();
  set.add({
    health: () =>
      health({
        lastListAt: 1_700_000_000_000,
        lastEventAt: 1_700_000_060_000,
        restarts: { error: 2, expired: 1, idle_timeout: 0, stream_end: 5, relist: 0 },
      }),
  });
  set.add({ health: () => health({ resource: "storageclasses", up: false, synced: false }) });
  const registry = new Registry();
  registerInformerMetrics(registry, set);
  const text = await registry.metrics();
  for (
    const line of [
      'csi_node_provisioner_informer_up{resource="persistentvolumes"} 1',
      'csi_node_provisioner_informer_up{resource="storageclasses"} 0',
      'csi_node_provisioner_informer_objects{resource="persistentvolumes"} 3',
      'csi_node_provisioner_informer_last_list_timestamp_seconds{resource="persistentvolumes"} 1700000000',
      'csi_node_provisioner_informer_last_event_timestamp_seconds{resource="persistentvolumes"} 1700000060',
      'csi_node_provisioner_informer_restarts_total{resource="persistentvolumes",reason="error"} 2',
      'csi_node_provisioner_informer_restarts_total{resource="persistentvolumes",reason="expired"} 1',
      'csi_node_provisioner_informer_restarts_total{resource="persistentvolumes",reason="idle_timeout"} 0',
      'csi_node_provisioner_informer_restarts_total{resource="persistentvolumes",reason="stream_end"} 5',
    ]
  ) ok(text.includes(line), `${line} in\n${text}`);
  ok(!text.includes('last_list_timestamp_seconds{resource="storageclasses"}'), "never listed");
  deepStrictEqual(await registry.metrics(), text, "scraping again counts nothing twice");
});
