import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { Histogram, Registry } from "prom-client";
import { BucketHistogram } from "./bucket_histogram.ts";
import { WORKQUEUE_DURATION_BUCKETS } from "./prometheus_metrics.ts";

const SPEC = { name: "demo_seconds", help: "How long a demo took." };
const BUCKETS = [...WORKQUEUE_DURATION_BUCKETS];

/** The same observations in ours and in prom-client's own Histogram, each on its own registry. */
function both(observations: [string, number][], zeroSeries: string[] = []) {
  const ours = new Registry();
  const theirs = new Registry();
  const bucketHistogram = new BucketHistogram({
    ...SPEC,
    label: "name",
    buckets: BUCKETS,
    registry: ours,
  });
  const histogram = new Histogram({
    ...SPEC,
    labelNames: ["name"],
    buckets: BUCKETS,
    registers: [theirs],
  });
  for (const name of zeroSeries) {
    bucketHistogram.series(name);
    histogram.zero({ name });
  }
  for (const [name, value] of observations) {
    bucketHistogram.series(name).observe(value);
    histogram.observe({ name }, value);
  }
  return { ours, theirs, bucketHistogram, histogram };
}

const OBSERVATIONS: [string, number][] = [
  ["claims", 0],
  ["claims", 1e-8],
  ["claims", 2.5e-7],
  ["volumes", 0.001],
  ["claims", 1],
  ["claims", 10],
  ["claims", 11],
  ["volumes", 3600],
  ["claims", 0.0034],
];

Deno.test("a BucketHistogram is scraped exactly as prom-client's Histogram given the same observations", async () => {
  const { ours, theirs } = both(OBSERVATIONS, ["unsavedpvs"]);
  const text = await ours.metrics();
  strictEqual(text, await theirs.metrics());
  strictEqual(text.includes('demo_seconds_bucket{le="1e-8",name="claims"} 2'), true, text);
  strictEqual(text.includes('demo_seconds_count{name="unsavedpvs"} 0'), true, text);
});

Deno.test("a BucketHistogram's JSON (get()) is prom-client's Histogram's, without exemplars", async () => {
  const { ours, theirs } = both(OBSERVATIONS);
  const withoutExemplars = JSON.parse(
    JSON.stringify(
      await theirs.getMetricsAsJSON(),
      (key, value) => key === "exemplar" ? undefined : value,
    ),
  );
  deepStrictEqual(await ours.getMetricsAsJSON(), withoutExemplars);
});

Deno.test("reset() zeroes every series of a BucketHistogram and keeps them exposed", async () => {
  const { ours, bucketHistogram } = both(OBSERVATIONS);
  bucketHistogram.reset();
  const { theirs } = both([], ["claims", "volumes"]);
  strictEqual(await ours.metrics(), await theirs.metrics());
});
