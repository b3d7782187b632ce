/**
 * What the API server sent, from its own /metrics. These counters are per
 * resource, not per client: a benchmark reads them before and after a window
 * in which its agent is the only client doing anything (kube-controller-manager
 * and kube-scheduler are idle), and a window without any agent measures what
 * the rest of the control plane contributes.
 */

/** One sample line of the Prometheus text format. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text exposition format (comments and blank lines skipped). */
export function parsePrometheusText(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? "").matchAll(LABEL)) {
      labels[label[1] ?? ""] = (label[2] ?? "").replace(/\\(.)/g, "$1");
    }
    samples.push({ name: match[1] ?? "", labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of every series of the metric whose labels pass the filter. */
export function sumMetric(
  samples: readonly MetricSample[],
  options: { name: string; filter?: (labels: Record<string, string>) => boolean },
): number {
  const { name, filter = () => true } = options;
  return samples
    .filter((sample) => sample.name === name && filter(sample.labels))
    .reduce((sum, sample) => sum + sample.value, 0);
}

/** Cumulative totals of what the API server sent to all clients. */
export interface ApiTraffic {
  /** LIST responses sent (one per page). */
  listResponses: number;
  /**
   * Objects returned by LISTs served from the watch cache. Not only clients'
   * LISTs: it jumped by 10,000 (and the etcd-side counter by 20,000) in
   * windows in which no LIST response was sent at all, so only for notes.
   */
  listObjects: number;
  /** Bytes of LIST responses as kube-apiserver wrote them (JSON or protobuf; gzip'd when large and accepted). */
  listBytes: number;
  /** Watch events sent (a streaming list's initial objects included; bookmarks not). */
  watchEvents: number;
  /** Bytes of those watch events, as encoded. */
  watchBytes: number;
}

/** The traffic counters in a scrape of kube-apiserver's /metrics. */
export function apiTraffic(samples: readonly MetricSample[]): ApiTraffic {
  return {
    listResponses: sumMetric(samples, {
      name: "apiserver_response_sizes_count",
      filter: (labels) => labels["verb"] === "LIST",
    }),
    listObjects: sumMetric(samples, { name: "apiserver_cache_list_returned_objects_total" }),
    listBytes: sumMetric(samples, {
      name: "apiserver_response_sizes_sum",
      filter: (labels) => labels["verb"] === "LIST",
    }),
    watchEvents: sumMetric(samples, { name: "apiserver_watch_events_total" }),
    watchBytes: sumMetric(samples, { name: "apiserver_watch_events_sizes_sum" }),
  };
}

/** after − before, field by field. */
export function trafficDelta(before: ApiTraffic, after: ApiTraffic): ApiTraffic {
  return {
    listResponses: after.listResponses - before.listResponses,
    listObjects: after.listObjects - before.listObjects,
    listBytes: after.listBytes - before.listBytes,
    watchEvents: after.watchEvents - before.watchEvents,
    watchBytes: after.watchBytes - before.watchBytes,
  };
}

/** Scrapes kube-apiserver's /metrics through the cluster's admin kubectl. */
export async function scrapeApiTraffic(
  kubectl: (args: string[]) => Promise<string>,
): Promise<ApiTraffic> {
  return apiTraffic(parsePrometheusText(await kubectl(["get", "--raw", "/metrics"])));
}
