import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { Registry } from "prom-client";
import { BoundedMap } from "./bounded.ts";
import { boundedMetrics } from "./bounded_metrics.ts";

Deno.test("BoundedMap driven past its limit keeps the newest entries and counts the evicted", () => {
  const sizes: number[] = [];
  let evicted = 0;
  const map = new BoundedMap<string, number>(3, {
    size: (entries) => sizes.push(entries),
    evicted: () => evicted++,
  });
  for (let i = 0; i < 10; i++) map.set(`k${i}`, i);
  deepStrictEqual([...map.entries()], [["k7", 7], ["k8", 8], ["k9", 9]]);
  deepStrictEqual([map.size, map.evictions, evicted], [3, 7, 7]);
  map.set("k7", 70); // a refresh makes it the newest
  map.set("k10", 10);
  deepStrictEqual([...map.entries()].map(([key]) => key), ["k9", "k7", "k10"]);
  strictEqual(map.dropOldestWhile((_key, value) => value < 50), 1);
  deepStrictEqual(sizes.slice(-1), [2]);
  throws(() => new BoundedMap(0));
});

Deno.test("boundedMetrics() reports entries, limit and evictions per collection, once per registry", async () => {
  const registry = new Registry();
  const a = boundedMetrics(registry)("infeasible_claims", 2);
  const b = boundedMetrics(registry)("refused_volumes", 5);
  const map = new BoundedMap<string, true>(2, a);
  for (const key of ["x", "y", "z"]) map.set(key, true);
  new BoundedMap<string, true>(5, b).set("pv", true);
  const text = await registry.metrics();
  for (
    const line of [
      'csi_node_provisioner_bounded_entries{collection="infeasible_claims"} 2',
      'csi_node_provisioner_bounded_limit{collection="infeasible_claims"} 2',
      'csi_node_provisioner_bounded_evictions_total{collection="infeasible_claims"} 1',
      'csi_node_provisioner_bounded_entries{collection="refused_volumes"} 1',
      'csi_node_provisioner_bounded_evictions_total{collection="refused_volumes"} 0',
    ]
  ) strictEqual(text.includes(line), true, `${line} in\n${text}`);
});
