/**
 * The dashboard and the alerts against a running agent's /metrics, both
 * ways: every metric they name is there, and every metric of the agent's own
 * (all but the runtime's process_* and nodejs_* families) has a place on
 * the dashboard. A metric added to the agent fails this until a panel shows
 * it; a panel for a metric the agent does not have fails it too.
 */

import { deepStrictEqual } from "node:assert/strict";
import {
  dashboardQueries,
  type Query,
  readDashboard,
  readRuleGroups,
  ruleQueries,
} from "./monitoring_files.ts";
import { exposedNames, metricNames } from "./promql_names.ts";

/** Series Prometheus makes itself for every target, not the agent. */
const PROMETHEUS_SERIES = new Set(["up"]);
/** The runtime's families (prom-client's default metrics): on the dashboard only in part. */
const RUNTIME_FAMILY = /^(process|nodejs)_/;

function namesIn(queries: Query[]): Map<string, string[]> {
  const where = new Map<string, string[]>();
  for (const query of queries) {
    for (const name of metricNames(query.expr)) {
      where.set(name, [...where.get(name) ?? [], query.where]);
    }
  }
  return where;
}

/** Throws, naming the metrics and where they are used, unless both directions hold. */
export async function checkMonitoringMetrics(metricsUrl: string): Promise<void> {
  const exposition = await (await fetch(metricsUrl)).text();
  const { names, families } = exposedNames(exposition);
  const dashboard = namesIn(dashboardQueries(await readDashboard()));
  const rules = namesIn(ruleQueries(await readRuleGroups()));
  const missing = [...new Map([...dashboard, ...rules])]
    .filter(([name]) => !names.has(name) && !PROMETHEUS_SERIES.has(name))
    .map(([name, where]) => `${name} (${where.join("; ")})`);
  deepStrictEqual(missing, [], "named by the dashboard or the alerts, absent from /metrics");
  const shown = [...dashboard.keys()];
  const unshown = [...families]
    .filter((family) => !RUNTIME_FAMILY.test(family))
    .filter((family) => !shown.some((name) => name === family || name.startsWith(`${family}_`)))
    .sort();
  deepStrictEqual(unshown, [], "the agent's metrics that no dashboard panel shows");
}
