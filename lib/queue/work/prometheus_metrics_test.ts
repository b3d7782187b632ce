import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { Registry } from "prom-client";
import { FakeClock } from "../../../tests/fakes/clock.ts";
import { createWorkQueueMetrics, WORKQUEUE_DURATION_BUCKETS } from "./prometheus_metrics.ts";
import { ItemExponentialFailureRateLimiter } from "./rate_limiters.ts";
import { WorkQueue } from "./queue.ts";

/** The value of one series in exposition text, or undefined when it is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function queueWithMetrics(
  name: string,
): { queue: WorkQueue; clock: FakeClock; registry: Registry } {
  const clock = new FakeClock();
  const registry = new Registry();
  const metrics = createWorkQueueMetrics(registry, { now: () => clock.now() });
  const rateLimiter = new ItemExponentialFailureRateLimiter(10, 1000);
  return {
    queue: new WorkQueue({ clock, rateLimiter, metrics: metrics.forQueue(name) }),
    clock,
    registry,
  };
}

/** Two queues of these names (real clock), their metrics on one registry. */
function twoQueues(
  firstName: string,
  secondName: string,
): { registry: Registry; queues: [WorkQueue, WorkQueue] } {
  const registry = new Registry();
  const metrics = createWorkQueueMetrics(registry);
  const queue = (name: string) => new WorkQueue({ metrics: metrics.forQueue(name) });
  return { registry, queues: [queue(firstName), queue(secondName)] };
}

Deno.test("forQueue() exposes every workqueue series of the queue at zero, with client-go's help", async () => {
  const registry = new Registry();
  createWorkQueueMetrics(registry).forQueue("claims");
  const text = await registry.metrics();
  const zeroSeries = [
    'workqueue_depth{name="claims"}',
    'workqueue_adds_total{name="claims"}',
    'workqueue_retries_total{name="claims"}',
    'workqueue_unfinished_work_seconds{name="claims"}',
    'workqueue_longest_running_processor_seconds{name="claims"}',
    'workqueue_queue_duration_seconds_count{name="claims"}',
    'workqueue_work_duration_seconds_bucket{le="1e-8",name="claims"}',
    'workqueue_work_duration_seconds_bucket{le="10",name="claims"}',
  ];
  for (const series of zeroSeries) strictEqual(sample(text, series), 0, series);
  const help = [
    "# HELP workqueue_depth Current depth of workqueue",
    "# HELP workqueue_adds_total Total number of adds handled by workqueue",
    "# HELP workqueue_queue_duration_seconds How long in seconds an item stays in workqueue before being requested.",
    "# HELP workqueue_work_duration_seconds How long in seconds processing an item from workqueue takes.",
    "# HELP workqueue_unfinished_work_seconds How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    "# HELP workqueue_longest_running_processor_seconds How many seconds has the longest running processor for workqueue been running.",
    "# HELP workqueue_retries_total Total number of retries handled by workqueue",
  ];
  for (const line of help) strictEqual(text.split("\n").includes(line), true, line);
});

Deno.test("the duration buckets are client-go's: 10 ns times powers of ten, ten of them", () => {
  deepStrictEqual(WORKQUEUE_DURATION_BUCKETS, [
    1e-8,
    1e-7,
    1e-6,
    1e-5,
    1e-4,
    1e-3,
    1e-2,
    1e-1,
    1,
    10,
  ]);
});

Deno.test("adds, depth and retries of a queue are counted under its name", async () => {
  const { queue, registry } = queueWithMetrics("claims");
  for (const key of ["a", "b", "a"]) queue.add(key);
  queue.addRateLimited("c");
  queue.addRateLimited("c");
  // client-go counts every AddAfter as a retry, an immediate one too.
  queue.addAfter("d", 0);
  const text = await registry.metrics();
  strictEqual(
    sample(text, 'workqueue_adds_total{name="claims"}'),
    3,
    "a duplicate add is not an add",
  );
  strictEqual(sample(text, 'workqueue_depth{name="claims"}'), 3);
  strictEqual(sample(text, 'workqueue_retries_total{name="claims"}'), 3);
  await queue.get();
  queue.add("e");
  queue.addAfter("f", 0);
  const later = await registry.metrics();
  strictEqual(sample(later, 'workqueue_depth{name="claims"}'), 4);
  strictEqual(
    sample(later, 'workqueue_adds_total{name="claims"}'),
    5,
    "counted on from the last scrape",
  );
  strictEqual(sample(later, 'workqueue_retries_total{name="claims"}'), 4);
  queue.shutDown();
});

Deno.test("two queues under one name add up, as their series would in Go", async () => {
  const { registry, queues: [first, second] } = twoQueues("claims", "claims");
  first.add("a");
  second.add("a");
  second.add("b");
  await first.get();
  first.done("a");
  const text = await registry.metrics();
  strictEqual(sample(text, 'workqueue_adds_total{name="claims"}'), 3);
  strictEqual(sample(text, 'workqueue_depth{name="claims"}'), 2);
  strictEqual(sample(text, 'workqueue_queue_duration_seconds_count{name="claims"}'), 1);
  strictEqual(sample(text, 'workqueue_work_duration_seconds_count{name="claims"}'), 1);
});

Deno.test("queue and work durations and the work in progress are measured on the queue's clock", async () => {
  const { queue, clock, registry } = queueWithMetrics("volumes");
  queue.add("a");
  queue.add("b");
  clock.advance(1500);
  await queue.get();
  clock.advance(2000);
  await queue.get();
  let text = await registry.metrics();
  strictEqual(sample(text, 'workqueue_queue_duration_seconds_sum{name="volumes"}'), 1.5 + 3.5);
  strictEqual(sample(text, 'workqueue_queue_duration_seconds_count{name="volumes"}'), 2);
  strictEqual(sample(text, 'workqueue_unfinished_work_seconds{name="volumes"}'), 2);
  strictEqual(sample(text, 'workqueue_longest_running_processor_seconds{name="volumes"}'), 2);
  clock.advance(1000);
  text = await registry.metrics();
  strictEqual(sample(text, 'workqueue_unfinished_work_seconds{name="volumes"}'), 3 + 1);
  strictEqual(sample(text, 'workqueue_longest_running_processor_seconds{name="volumes"}'), 3);
  queue.done("a");
  text = await registry.metrics();
  strictEqual(sample(text, 'workqueue_work_duration_seconds_sum{name="volumes"}'), 3);
  strictEqual(sample(text, 'workqueue_work_duration_seconds_bucket{le="1",name="volumes"}'), 0);
  strictEqual(sample(text, 'workqueue_work_duration_seconds_bucket{le="10",name="volumes"}'), 1);
  strictEqual(
    sample(text, 'workqueue_unfinished_work_seconds{name="volumes"}'),
    1,
    "only b is left",
  );
  strictEqual(sample(text, 'workqueue_longest_running_processor_seconds{name="volumes"}'), 1);
  queue.done("b");
  text = await registry.metrics();
  strictEqual(sample(text, 'workqueue_unfinished_work_seconds{name="volumes"}'), 0);
  strictEqual(sample(text, 'workqueue_longest_running_processor_seconds{name="volumes"}'), 0);
});

Deno.test("queues of one registry keep their series apart by name", async () => {
  const { registry, queues: [claims, volumes] } = twoQueues("claims", "volumes");
  claims.add("a");
  claims.add("b");
  volumes.add("a");
  const text = await registry.metrics();
  strictEqual(sample(text, 'workqueue_adds_total{name="claims"}'), 2);
  strictEqual(sample(text, 'workqueue_adds_total{name="volumes"}'), 1);
  strictEqual(sample(text, 'workqueue_adds_total{name="unsavedpvs"}'), undefined);
});
