import { deepStrictEqual } from "node:assert/strict";
import { exposedNames, metricNames } from "./promql_names.ts";

Deno.test("metricNames() finds the metrics and skips functions, labels, strings and durations", () => {
  deepStrictEqual(
    metricNames(
      'histogram_quantile(0.99, sum by (le, node) (rate(csi_sidecar_operations_seconds_bucket{job="$job", method_name=~".*/CreateVolume"}[$__rate_interval])))',
    ),
    ["csi_sidecar_operations_seconds_bucket"],
  );
  deepStrictEqual(
    metricNames(
      'csistoragecapacities_desired_goal{a="b"} - on (pod) group_left (node) csistoragecapacities_desired_current offset 5m > 0 and bool up',
    ),
    ["csistoragecapacities_desired_goal", "csistoragecapacities_desired_current", "up"],
  );
  deepStrictEqual(metricNames("time() - process_start_time_seconds > 1e3"), [
    "process_start_time_seconds",
  ]);
  deepStrictEqual(metricNames('count(foo{x="by (y) ignoring"}) without (z)'), ["foo"]);
});

Deno.test("exposedNames() gives series names, and a histogram's bucket, sum and count", () => {
  const { names, families } = exposedNames([
    "# HELP a_seconds A.",
    "# TYPE a_seconds histogram",
    "# HELP b_total B.",
    "# TYPE b_total counter",
    'b_total{class="x"} 3',
    "c 1",
  ].join("\n"));
  deepStrictEqual([...families], ["a_seconds", "b_total"]);
  deepStrictEqual(
    [...names].sort(),
    ["a_seconds", "a_seconds_bucket", "a_seconds_count", "a_seconds_sum", "b_total", "c"],
  );
});
