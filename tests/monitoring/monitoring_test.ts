/**
 * deploy/monitoring/ as an operator installs it: every query of the
 * dashboard and every alert is PromQL that Prometheus's own promtool accepts
 * (Debian's prometheus package, installed when missing); the kustomize
 * component and the Helm chart install the same alerts, dashboard and
 * scrape settings, and the chart only when asked; the PodMonitor scrapes the
 * agent's port and nothing else, in deploy/'s DaemonSet, the example's, the
 * chart's, and a driver's DaemonSet with the component; every alert links
 * its section of docs/runbooks.md. That the metrics exist is checked
 * against a running agent in tests/image/image_agent_test.ts.
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { runCommand } from "../../deploy/image/command.ts";
import { ensureDebianTools } from "../../deploy/image/debian_packages.ts";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import { AGENT_PORT_NAME } from "../deploy/daemonset_checks.ts";
import { renderWithComponent } from "../deploy/driver_daemonsets.ts";
import {
  agentContainer,
  EXAMPLE_DIR,
  type K8sObject,
  parseObjects,
  renderHelm,
  renderKustomize,
  run,
  theObject,
} from "../deploy/render.ts";
import { upstreamHostpathDaemonSet } from "../deploy/upstream_hostpath.ts";
import {
  dashboardQueries,
  MONITORING_DIR,
  readDashboard,
  readRuleGroups,
  type RuleGroup,
  ruleQueries,
  withGrafanaVariables,
} from "./monitoring_files.ts";
import { scrapedContainers } from "./scrape.ts";

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

/** Upstream's hostpath DaemonSet with the component, in a driver's own namespace. */
async function driverWithAgent(kubectl: string): Promise<{ before: K8sObject; after: K8sObject }> {
  const upstream = await upstreamHostpathDaemonSet();
  const rendered = await renderWithComponent(kubectl, upstream, { namespace: "hostpath-driver" });
  return {
    before: theObject(parseObjects(upstream), "DaemonSet"),
    after: theObject(parseObjects(rendered), "DaemonSet"),
  };
}

Deno.test("kubectl kustomize deploy/monitoring renders the PodMonitor, the alerts and the dashboard", async () => {
  const { kubectl } = await ensureClusterBinaries();
  const objects = parseObjects(await run(kubectl, ["kustomize", MONITORING_DIR]));
  deepStrictEqual(objects.map((o) => o.kind).sort(), ["ConfigMap", "PodMonitor", "PrometheusRule"]);
  const dashboard = theObject(objects, "ConfigMap");
  strictEqual(dashboard.metadata.labels?.grafana_dashboard, "1");
  deepStrictEqual(
    JSON.parse((dashboard.data as Record<string, string>)["csi-node-provisioner.json"]!),
    await readDashboard(),
  );
});

Deno.test("the PodMonitor scrapes the agent and nothing else, in its own DaemonSet or a driver's", async () => {
  const { kubectl } = await ensureClusterBinaries();
  const podMonitor = theObject(
    parseObjects(await run(kubectl, ["kustomize", MONITORING_DIR])),
    "PodMonitor",
  );
  strictEqual(
    (podMonitor.spec as { podMetricsEndpoints: { port: string }[] }).podMetricsEndpoints[0]!.port,
    AGENT_PORT_NAME,
  );
  for (const dir of [undefined, EXAMPLE_DIR]) {
    const daemonSet = theObject((await renderKustomize(kubectl, dir)).objects, "DaemonSet");
    deepStrictEqual(scrapedContainers(podMonitor, daemonSet), [agentContainer(daemonSet).name]);
  }
  // Inside a driver's DaemonSet, in the driver's namespace: the swapped container only.
  const driver = await driverWithAgent(kubectl);
  deepStrictEqual(scrapedContainers(podMonitor, driver.before), []);
  deepStrictEqual(scrapedContainers(podMonitor, driver.after), ["csi-provisioner"]);
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
  const podMonitor = theObject(objects, "PodMonitor");
  deepStrictEqual(scrapedContainers(podMonitor, daemonSet), [agentContainer(daemonSet).name]);
  const podMonitorSpec = podMonitor.spec as {
    podMetricsEndpoints: { port: string; relabelings: unknown }[];
  };
  deepStrictEqual(podMonitorSpec.podMetricsEndpoints[0]!.relabelings, fileEndpoint.relabelings);
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
  const servicePorts = (service.spec as { ports: { targetPort: string }[] }).ports;
  deepStrictEqual(servicePorts.map((port) => port.targetPort), [AGENT_PORT_NAME]);
});

Deno.test("the chart's PodMonitor finds the agent inside a driver's DaemonSet (daemonset.create=false)", async () => {
  const [helm, { kubectl }] = await Promise.all([ensureHelm(), ensureClusterBinaries()]);
  const objects = (await renderHelm(helm, {
    set: [
      "daemonset.create=false",
      "serviceAccount.create=false",
      "monitoring.podMonitor.enabled=true",
    ],
  })).objects;
  const podMonitor = theObject(objects, "PodMonitor");
  const driver = await driverWithAgent(kubectl);
  deepStrictEqual(scrapedContainers(podMonitor, driver.after), ["csi-provisioner"]);
  deepStrictEqual(scrapedContainers(podMonitor, driver.before), []);
  // The ServiceMonitor's Service selects this chart's pods only: refused rather than empty.
  await rejects(
    renderHelm(helm, {
      set: ["daemonset.create=false", "monitoring.serviceMonitor.enabled=true"],
    }),
    /with daemonset.create=false use monitoring.podMonitor/,
  );
});

const RUNBOOKS = join(REPO_ROOT, "docs", "runbooks.md");
const RUNBOOK_BASE =
  "https://github.com/csi-node-provisioner/csi-node-provisioner/blob/main/docs/runbooks.md#";

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

type Alert = RuleGroup["rules"][number] & { annotations?: Record<string, string> };

Deno.test("every alert links a section of docs/runbooks.md that says what, how to check, what to do", async () => {
  const markdown = await Deno.readTextFile(RUNBOOKS);
  const sections = new Map(
    markdown.split(/^## /m).slice(1).map((section) => {
      const [heading, ...body] = section.split("\n");
      return [anchorOf(heading!), body.join("\n")] as const;
    }),
  );
  const alerts = (await readRuleGroups()).flatMap((group) => group.rules as Alert[]);
  strictEqual(alerts.length, 24);
  for (const { alert, annotations } of alerts) {
    const url = annotations?.runbook_url ?? "";
    ok(url.startsWith(RUNBOOK_BASE), `${alert}: runbook_url ${url}`);
    const section = sections.get(url.slice(RUNBOOK_BASE.length));
    ok(section !== undefined, `${alert}: no section #${url.slice(RUNBOOK_BASE.length)}`);
    for (const part of ["**Meaning.**", "**Check.**", "**Do.**"]) {
      ok(section.includes(part), `${alert}: its runbook has no ${part}`);
    }
  }
});

Deno.test("the chart's runbook_url follows monitoring.prometheusRule.runbookBaseUrl", async () => {
  const helm = await ensureHelm();
  const base = "https://docs.example.com/runbooks.html";
  const objects = (await renderHelm(helm, {
    set: [
      "monitoring.prometheusRule.enabled=true",
      `monitoring.prometheusRule.runbookBaseUrl=${base}`,
    ],
  })).objects;
  const groups = (theObject(objects, "PrometheusRule").spec as { groups: { rules: Alert[] }[] })
    .groups;
  const urls = groups.flatMap((group) =>
    group.rules.map((rule) => rule.annotations?.runbook_url ?? "")
  );
  strictEqual(urls.length, 24);
  for (const url of urls) ok(url.startsWith(`${base}#csinodeprovisioner`), url);
});
