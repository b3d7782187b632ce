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
}

/**
 * Requests by verb. apiserver_request_total counts a watch only once it has
 * ended, so the watches still open (the gauge apiserver_longrunning_requests)
 * are added: then the difference of two scrapes is the watches started in
 * between, whether they ended or not.
 */
export function requestsByVerb(samples: readonly MetricSample[]): Record<string, number> {
  const byVerb: Record<string, number> = {};
  for (const sample of samples) {
    if (sample.name !== "apiserver_request_total") continue;
    const verb = sample.labels["verb"] ?? "";
    byVerb[verb] = (byVerb[verb] ?? 0) + sample.value;
  }
  const openWatches = sumMetric(samples, {
    name: "apiserver_longrunning_requests",
    filter: (labels) => labels["verb"] === "WATCH",
  });
  byVerb["WATCH"] = (byVerb["WATCH"] ?? 0) + openWatches;
  return byVerb;
}

/** after − before, verb by verb (a verb seen in either). */
export function countersDelta(
  before: ApiServerCounters,
  after: ApiServerCounters,
): ApiServerCounters {
  const verbs = new Set([...Object.keys(before.requests), ...Object.keys(after.requests)]);
  const requests: Record<string, number> = {};
  for (const verb of verbs) {
    requests[verb] = (after.requests[verb] ?? 0) - (before.requests[verb] ?? 0);
  }
  return {
    cpuSeconds: after.cpuSeconds - before.cpuSeconds,
    requests,
    watchEvents: after.watchEvents - before.watchEvents,
  };
}

/** Every request, all verbs. */
export function totalRequests(counters: ApiServerCounters): number {
  return Object.values(counters.requests).reduce((sum, count) => sum + count, 0);
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
  };
}
