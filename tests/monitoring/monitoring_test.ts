/**
 * deploy/monitoring/ as an operator installs it: every query of the
 * dashboard and every alert is PromQL that Prometheus's own promtool accepts
 * (Debian's prometheus package, installed when missing); the kustomize
 * component and the Helm chart install the same alerts, dashboard and
 * scrape settings, and the chart only when asked; the monitors select the
 * agents' pods and their metrics port. That the metrics exist is checked
 * against a running agent in tests/image/image_agent_test.ts.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { runCommand } from "../../deploy/image/command.ts";
import { ensureDebianTools } from "../../deploy/image/debian_packages.ts";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import {
  agentContainer,
  type K8sObject,
  parseObjects,
  renderHelm,
  renderKustomize,
  run,
  theObject,
} from "../deploy/render.ts";
import {
  dashboardQueries,
  MONITORING_DIR,
  readDashboard,
  readRuleGroups,
  ruleQueries,
  withGrafanaVariables,
} from "./monitoring_files.ts";

const PROMTOOL = { provides: "promtool", package: "prometheus" };
const ALL_ON = [
  "monitoring.podMonitor.enabled=true",
  "monitoring.serviceMonitor.enabled=true",
  "monitoring.prometheusRule.enabled=true",
  "monitoring.dashboard.enabled=true",
];
const MONITORING_KINDS = ["ConfigMap", "PodMonitor", "PrometheusRule", "Service", "ServiceMonitor"];

async function promtoolCheckRules(groups: unknown): Promise<string> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, JSON.stringify({ groups }));
    return await runCommand("promtool", ["check", "rules", file]);
  } finally {
    await Deno.remove(file);
  }
}

async function fileObject(name: string): Promise<K8sObject> {
  return parseObjects(await Deno.readTextFile(join(MONITORING_DIR, name)))[0]!;
}

function podLabels(daemonSet: K8sObject): Record<string, string> {
  return (daemonSet.spec as { template: { metadata: { labels: Record<string, string> } } })
    .template.metadata.labels;
}

function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

Deno.test("every alert and every dashboard query is PromQL that promtool accepts", async () => {
  await ensureDebianTools([PROMTOOL], { why: "monitoring test" });
  const output = await promtoolCheckRules(await readRuleGroups());
  ok(/SUCCESS: 24 rules found/.test(output), output);
  // Each dashboard query, with Grafana's variables filled in, as a recording rule.
  const queries = dashboardQueries(await readDashboard());
  ok(queries.length >= 30, `${queries.length} queries`);
  const rules = queries.map((query, index) => ({
    record: `dashboard:query_${index}`,
    expr: withGrafanaVariables(query.expr),
  }));
  const dashboard = await promtoolCheckRules([{ name: "dashboard", rules }]);
  ok(dashboard.includes(`SUCCESS: ${rules.length} rules found`), dashboard);
});

Deno.test("the dashboard's panels are laid out on Grafana's grid, each on the chosen data source", async () => {
  const dashboard = await readDashboard() as unknown as {
    panels: {
      id: number;
      type: string;
      gridPos: { x: number; w: number };
      datasource?: { uid: string };
    }[];
  };
  const ids = dashboard.panels.map((panel) => panel.id);
  strictEqual(new Set(ids).size, ids.length, "unique panel ids");
  for (const panel of dashboard.panels) {
    ok(panel.gridPos.x + panel.gridPos.w <= 24, `panel ${panel.id} fits the 24 columns`);
    if (panel.type !== "row") strictEqual(panel.datasource?.uid, "${datasource}");
  }
  for (const { expr, where } of dashboardQueries(await readDashboard())) {
    if (where.startsWith("variable $job")) continue;
    ok(expr.includes('job="$job"'), `${where} selects the job`);
  }
  for (const { expr, where } of ruleQueries(await readRuleGroups())) {
    ok(expr.includes('job="csi-node-provisioner"'), `${where} selects the job`);
  }
});

Deno.test("kubectl kustomize deploy/monitoring renders the PodMonitor, the alerts and the dashboard for deploy/'s pods", async () => {
  const { kubectl } = await ensureClusterBinaries();
  const objects = parseObjects(await run(kubectl, ["kustomize", MONITORING_DIR]));
  deepStrictEqual(objects.map((o) => o.kind).sort(), ["ConfigMap", "PodMonitor", "PrometheusRule"]);
  const base = (await renderKustomize(kubectl)).objects;
  const daemonSet = theObject(base, "DaemonSet");
  const podMonitor = theObject(objects, "PodMonitor");
  strictEqual(podMonitor.metadata.namespace, daemonSet.metadata.namespace);
  const spec = podMonitor.spec as {
    selector: { matchLabels: Record<string, string> };
    podMetricsEndpoints: { port: string }[];
  };
  ok(selects(spec.selector.matchLabels, podLabels(daemonSet)), "selects deploy/'s pods");
  const ports = (agentContainer(daemonSet).ports ?? []) as { name: string }[];
  ok(ports.some((port) => port.name === spec.podMetricsEndpoints[0]!.port), "the metrics port");
  const dashboard = theObject(objects, "ConfigMap");
  strictEqual(dashboard.metadata.labels?.grafana_dashboard, "1");
  deepStrictEqual(
    JSON.parse((dashboard.data as Record<string, string>)["csi-node-provisioner.json"]!),
    await readDashboard(),
  );
});

Deno.test("the Helm chart installs monitoring only when asked, with deploy/monitoring's alerts, dashboard and relabelings", async () => {
  const helm = await ensureHelm();
  const defaults = (await renderHelm(helm)).objects;
  for (const kind of MONITORING_KINDS) {
    ok(!defaults.some((object) => object.kind === kind), `${kind} is off by default`);
  }
  const objects = (await renderHelm(helm, {
    set: [...ALL_ON, "monitoring.prometheusRule.labels.release=prom"],
  })).objects;
  const daemonSet = theObject(objects, "DaemonSet");
  const rule = theObject(objects, "PrometheusRule");
  deepStrictEqual(rule.spec, (await fileObject("prometheus-rule.yaml")).spec);
  strictEqual(rule.metadata.labels?.release, "prom");
  const dashboard = theObject(objects, "ConfigMap");
  deepStrictEqual(
    JSON.parse((dashboard.data as Record<string, string>)["csi-node-provisioner.json"]!),
    await readDashboard(),
  );
  const fileEndpoint = ((await fileObject("pod-monitor.yaml")).spec as {
    podMetricsEndpoints: { relabelings: unknown }[];
  }).podMetricsEndpoints[0]!;
  const podMonitor = theObject(objects, "PodMonitor").spec as {
    selector: { matchLabels: Record<string, string> };
    podMetricsEndpoints: { port: string; relabelings: unknown }[];
  };
  ok(selects(podMonitor.selector.matchLabels, podLabels(daemonSet)), "PodMonitor selects the pods");
  deepStrictEqual(podMonitor.podMetricsEndpoints[0]!.relabelings, fileEndpoint.relabelings);
  const service = theObject(objects, "Service");
  const serviceMonitor = theObject(objects, "ServiceMonitor").spec as {
    selector: { matchLabels: Record<string, string> };
    endpoints: { port: string; relabelings: unknown }[];
  };
  ok(
    selects((service.spec as { selector: Record<string, string> }).selector, podLabels(daemonSet)),
  );
  ok(selects(serviceMonitor.selector.matchLabels, service.metadata.labels ?? {}));
  deepStrictEqual(serviceMonitor.endpoints[0]!.relabelings, fileEndpoint.relabelings);
  strictEqual(serviceMonitor.endpoints[0]!.port, "metrics");
});
