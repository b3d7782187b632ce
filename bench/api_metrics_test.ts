import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { apiTraffic, parsePrometheusText, sumMetric, trafficDelta } from "./api_metrics.ts";

const SCRAPE = `# HELP apiserver_watch_events_total Number of events sent in watch clients
# TYPE apiserver_watch_events_total counter
apiserver_watch_events_total{group="",resource="persistentvolumes",version="v1"} 10
apiserver_watch_events_total{group="",resource="persistentvolumeclaims",version="v1"} 5
apiserver_watch_events_sizes_sum{group="",resource="persistentvolumes",version="v1"} 1000
apiserver_cache_list_returned_objects_total{index="",resource_prefix="/persistentvolumes"} 7
apiserver_storage_list_returned_objects_total{resource="persistentvolumes"} 3
apiserver_response_sizes_sum{component="apiserver",group="",resource="persistentvolumes",scope="cluster",subresource="",verb="LIST",version="v1"} 2048
apiserver_response_sizes_sum{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="GET",version="v1"} 99
apiserver_response_sizes_count{component="apiserver",group="",resource="persistentvolumes",scope="cluster",subresource="",verb="LIST",version="v1"} 4
apiserver_response_sizes_count{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="GET",version="v1"} 9
process_start_time_seconds 1.7e+09
weird{label="a \\"quoted\\" value"} 1
`;

Deno.test("parsePrometheusText() reads names, labels (with escapes) and values", () => {
  const samples = parsePrometheusText(SCRAPE);
  strictEqual(samples.length, 11);
  deepStrictEqual(samples[0], {
    name: "apiserver_watch_events_total",
    labels: { group: "", resource: "persistentvolumes", version: "v1" },
    value: 10,
  });
  deepStrictEqual(samples.at(-2), { name: "process_start_time_seconds", labels: {}, value: 1.7e9 });
  strictEqual(samples.at(-1)?.labels["label"], 'a "quoted" value');
  strictEqual(
    sumMetric(samples, {
      name: "apiserver_watch_events_total",
      filter: (labels) => labels["resource"] === "persistentvolumes",
    }),
    10,
  );
});

Deno.test("apiTraffic() counts LIST responses, items and bytes, and watch events and their bytes", () => {
  const traffic = apiTraffic(parsePrometheusText(SCRAPE));
  deepStrictEqual(traffic, {
    listResponses: 4,
    listObjects: 7,
    listBytes: 2048,
    watchEvents: 15,
    watchBytes: 1000,
  });
  deepStrictEqual(trafficDelta(traffic, { ...traffic, watchEvents: 20, listBytes: 4096 }), {
    listResponses: 0,
    listObjects: 0,
    listBytes: 2048,
    watchEvents: 5,
    watchBytes: 0,
  });
});
