/**
 * The fleet scenario's view of kube-apiserver: its CPU from /proc, and from
 * its own /metrics the requests it answered by verb and the watch events it
 * sent. These count every client (the agents, kube-scheduler,
 * kube-controller-manager, the benchmark): the fleet scenario runs one kind of
 * agent per cluster and the same workload for both, so the rest is equal on
 * both sides and the difference is the agents'.
 */
import { type MetricSample, parsePrometheusText, sumMetric } from "./api_metrics.ts";
import { cpuSeconds } from "./process_stats.ts";

/** The verbs reported one by one, as apiserver_request_total labels them: POST creates, PUT updates. */
export const REPORTED_VERBS = ["GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Cumulative counters of kube-apiserver at one moment. */
export interface ApiServerCounters {
  /** User + system CPU seconds of the kube-apiserver process. */
  cpuSeconds: number;
  /** Requests by verb label (APPLY, DELETECOLLECTION … included); WATCH: watches started. */
  requests: Record<string, number>;
  /** apiserver_watch_events_total, all resources. */
  watchEvents: number;
  /** The same by resource (persistentvolumeclaims, pods, …). */
  watchEventsByResource: Record<string, number>;
  /** apiserver_flowcontrol_rejected_requests_total by flow schema: whose requests were refused. */
  refusedByFlowSchema: Record<string, number>;
  /**
   * apiserver_flowcontrol_dispatched_requests_total by flow schema: every
   * request priority and fairness let through, discovery GETs and 404s of
   * paths no API serves included, which apiserver_request_total does not
   * count (added 2026-11-29, after two kinds of the agents' requests stayed
   * hidden from it: the snapshot sweep's look and a second discovery GET).
   */
  dispatchedByFlowSchema: Record<string, number>;
  /**
   * Requests answered 429 Too Many Requests, every client, by verb and resource
   * ("LIST persistentvolumeclaims"): apiserver_request_total counts priority and
   * fairness's rejections under that code too (RecordDroppedRequest).
   */
  refusedByRequest: Record<string, number>;
}

/** The metric's series summed by the value of one label. */
export function sumByLabel(
  samples: readonly MetricSample[],
  options: { name: string; label: string },
): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const sample of samples) {
    if (sample.name !== options.name) continue;
    const value = sample.labels[options.label] ?? "";
    sums[value] = (sums[value] ?? 0) + sample.value;
  }
  return sums;
}

/**
 * Requests by verb. apiserver_request_total counts a watch only once it has
 * ended, so the watches still open (the gauge apiserver_longrunning_requests)
 * are added: then the difference of two scrapes is the watches started in
 * between, whether they ended or not.
 */
export function requestsByVerb(samples: readonly MetricSample[]): Record<string, number> {
  const byVerb = sumByLabel(samples, { name: "apiserver_request_total", label: "verb" });
  const openWatches = sumMetric(samples, {
    name: "apiserver_longrunning_requests",
    filter: (labels) => labels["verb"] === "WATCH",
  });
  byVerb["WATCH"] = (byVerb["WATCH"] ?? 0) + openWatches;
  return byVerb;
}

function recordDelta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return Object.fromEntries([...keys].map((key) => [key, (after[key] ?? 0) - (before[key] ?? 0)]));
}

/** after − before, verb by verb and resource by resource (one seen in either). */
export function countersDelta(
  before: ApiServerCounters,
  after: ApiServerCounters,
): ApiServerCounters {
  return {
    cpuSeconds: after.cpuSeconds - before.cpuSeconds,
    requests: recordDelta(before.requests, after.requests),
    watchEvents: after.watchEvents - before.watchEvents,
    watchEventsByResource: recordDelta(before.watchEventsByResource, after.watchEventsByResource),
    refusedByFlowSchema: recordDelta(before.refusedByFlowSchema, after.refusedByFlowSchema),
    dispatchedByFlowSchema: recordDelta(
      before.dispatchedByFlowSchema,
      after.dispatchedByFlowSchema,
    ),
    refusedByRequest: recordDelta(before.refusedByRequest, after.refusedByRequest),
  };
}

/** "persistentvolumeclaims 3000, pods 2000, …": the `top` largest counts, largest first. */
export function describeLargest(counts: Record<string, number>, top: number): string {
  return Object.entries(counts)
    .filter(([, count]) => count > 0)
    .sort(([, a], [, b]) => b - a)
    .slice(0, top)
    .map(([key, count]) => `${key} ${count}`)
    .join(", ");
}

/**
 * Requests answered 429, whatever refused them (priority and fairness, or max
 * in flight), by "VERB resource" (the resource empty for a non-resource path).
 */
export function refusedByRequest(samples: readonly MetricSample[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const sample of samples) {
    if (sample.name !== "apiserver_request_total" || sample.labels["code"] !== "429") continue;
    const key = `${sample.labels["verb"] ?? ""} ${sample.labels["resource"] ?? ""}`.trim();
    counts[key] = (counts[key] ?? 0) + sample.value;
  }
  return counts;
}

/** Every request, all verbs. */
export function totalRequests(counters: ApiServerCounters): number {
  return sumOfCounts(counters.requests);
}

/** Every request answered 429. */
export function totalRefused(counters: ApiServerCounters): number {
  return sumOfCounts(counters.refusedByRequest);
}

function sumOfCounts(counts: Record<string, number>): number {
  return Object.values(counts).reduce((sum, count) => sum + count, 0);
}

/**
 * kube-apiserver's counters now. The CPU is read before the scrape, so a
 * window between two samples pays for exactly one scrape of /metrics (the
 * first), whichever agent runs.
 */
export async function sampleApiServer(
  pid: number,
  kubectl: (args: string[]) => Promise<string>,
): Promise<ApiServerCounters> {
  const cpu = cpuSeconds(pid);
  const samples = parsePrometheusText(await kubectl(["get", "--raw", "/metrics"]));
  return {
    cpuSeconds: cpu,
    requests: requestsByVerb(samples),
    watchEvents: sumMetric(samples, { name: "apiserver_watch_events_total" }),
    watchEventsByResource: sumByLabel(samples, {
      name: "apiserver_watch_events_total",
      label: "resource",
    }),
    refusedByRequest: refusedByRequest(samples),
    refusedByFlowSchema: sumByLabel(samples, {
      name: "apiserver_flowcontrol_rejected_requests_total",
      label: "flow_schema",
    }),
    dispatchedByFlowSchema: sumByLabel(samples, {
      name: "apiserver_flowcontrol_dispatched_requests_total",
      label: "flow_schema",
    }),
  };
}
