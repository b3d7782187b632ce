import { deepStrictEqual } from "node:assert/strict";
import { parsePrometheusText } from "./api_metrics.ts";
import { countersDelta, requestsByVerb, totalRequests } from "./fleet_metrics.ts";

const SCRAPE = `
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="pods",verb="GET"} 3
apiserver_request_total{code="404",resource="pods",verb="GET"} 1
apiserver_request_total{code="201",resource="pods",verb="POST"} 5
apiserver_request_total{code="200",resource="nodes",verb="WATCH"} 2
apiserver_request_total{code="200",resource="persistentvolumes",verb="LIST"} 4
# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{resource="pods",verb="WATCH"} 7
apiserver_longrunning_requests{resource="pods",subresource="exec",verb="CONNECT"} 1
`;

Deno.test("requestsByVerb() sums every code and resource, and counts open watches as started", () => {
  deepStrictEqual(requestsByVerb(parsePrometheusText(SCRAPE)), {
    GET: 4,
    POST: 5,
    WATCH: 9,
    LIST: 4,
  });
});

Deno.test("countersDelta() subtracts verb by verb, a verb missing before counting from 0", () => {
  const delta = countersDelta(
    { cpuSeconds: 1.5, requests: { GET: 10, WATCH: 3 }, watchEvents: 100 },
    { cpuSeconds: 4, requests: { GET: 12, WATCH: 5, PATCH: 6 }, watchEvents: 150 },
  );
  deepStrictEqual(delta, {
    cpuSeconds: 2.5,
    requests: { GET: 2, WATCH: 2, PATCH: 6 },
    watchEvents: 50,
  });
  deepStrictEqual(totalRequests(delta), 10);
});
