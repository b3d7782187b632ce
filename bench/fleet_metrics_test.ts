import { deepStrictEqual } from "node:assert/strict";
import { parsePrometheusText } from "./api_metrics.ts";
import {
  countersDelta,
  describeLargest,
  refusedByRequest,
  requestsByVerb,
  sumByLabel,
  totalRefused,
  totalRequests,
} from "./fleet_metrics.ts";

const SCRAPE = `
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="pods",verb="GET"} 3
apiserver_request_total{code="404",resource="pods",verb="GET"} 1
apiserver_request_total{code="201",resource="pods",verb="POST"} 5
apiserver_request_total{code="200",resource="nodes",verb="WATCH"} 2
apiserver_request_total{code="200",resource="persistentvolumes",verb="LIST"} 4
apiserver_request_total{code="429",resource="persistentvolumes",verb="POST"} 2
apiserver_request_total{code="429",resource="events",verb="POST"} 3
# TYPE apiserver_flowcontrol_rejected_requests_total counter
apiserver_flowcontrol_rejected_requests_total{flow_schema="service-accounts",priority_level="workload-low",reason="queue-full"} 4
apiserver_flowcontrol_rejected_requests_total{flow_schema="service-accounts",priority_level="workload-low",reason="time-out"} 1
# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{resource="pods",verb="WATCH"} 7
apiserver_longrunning_requests{resource="pods",subresource="exec",verb="CONNECT"} 1
# TYPE apiserver_watch_events_total counter
apiserver_watch_events_total{group="",resource="pods",version="v1"} 30
apiserver_watch_events_total{group="storage.k8s.io",resource="csinodes",version="v1"} 4
`;

Deno.test("requestsByVerb() sums every code and resource, and counts open watches as started", () => {
  deepStrictEqual(requestsByVerb(parsePrometheusText(SCRAPE)), {
    GET: 4,
    POST: 10,
    WATCH: 9,
    LIST: 4,
  });
});

Deno.test("countersDelta() subtracts verb by verb, a verb missing before counting from 0", () => {
  const delta = countersDelta(
    {
      cpuSeconds: 1.5,
      requests: { GET: 10, WATCH: 3 },
      watchEvents: 100,
      watchEventsByResource: { pods: 100 },
      refusedByFlowSchema: { "service-accounts": 4 },
      refusedByRequest: { "POST events": 4 },
      dispatchedByFlowSchema: { "service-accounts": 100, exempt: 7 },
    },
    {
      cpuSeconds: 4,
      requests: { GET: 12, WATCH: 5, PATCH: 6 },
      watchEvents: 150,
      watchEventsByResource: { pods: 120, nodes: 30 },
      refusedByFlowSchema: { "service-accounts": 6, "workload-low": 3 },
      refusedByRequest: { "POST events": 5, "LIST pods": 4 },
      dispatchedByFlowSchema: { "service-accounts": 150, exempt: 9, "kube-scheduler": 40 },
    },
  );
  deepStrictEqual(delta, {
    cpuSeconds: 2.5,
    requests: { GET: 2, WATCH: 2, PATCH: 6 },
    watchEvents: 50,
    watchEventsByResource: { pods: 20, nodes: 30 },
    refusedByFlowSchema: { "service-accounts": 2, "workload-low": 3 },
    refusedByRequest: { "POST events": 1, "LIST pods": 4 },
    dispatchedByFlowSchema: { "service-accounts": 50, exempt: 2, "kube-scheduler": 40 },
  });
  deepStrictEqual(totalRequests(delta), 10);
  deepStrictEqual(totalRefused(delta), 5);
});

Deno.test("sumByLabel() and describeLargest() give watch events by resource, largest first", () => {
  const byResource = sumByLabel(parsePrometheusText(SCRAPE), {
    name: "apiserver_watch_events_total",
    label: "resource",
  });
  deepStrictEqual(byResource, { pods: 30, csinodes: 4 });
  deepStrictEqual(describeLargest({ ...byResource, nodes: 0, pvs: 9 }, 2), "pods 30, pvs 9");
});

Deno.test("refusedByRequest() and sumByLabel() count the 429s by request and whose requests were refused", () => {
  const samples = parsePrometheusText(SCRAPE);
  deepStrictEqual(refusedByRequest(samples), { "POST persistentvolumes": 2, "POST events": 3 });
  deepStrictEqual(
    sumByLabel(samples, {
      name: "apiserver_flowcontrol_rejected_requests_total",
      label: "flow_schema",
    }),
    { "service-accounts": 5 },
  );
});
